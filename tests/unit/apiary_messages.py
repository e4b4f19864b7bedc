"""Hand-written Apiary Kafka messages, and the events they hold written out independently as Thrift objects.

The messages have the shape ExpediaGroup's ``JsonMetaStoreEventSerDe`` (Jackson) writes: the Thrift field
names of the Hive version the listener was built against, every one of them present, unset ones ``null``,
enums by name, binary as base64, and SkewedInfo's location map as a list of ``{"key": [...], "value": ...}``
(see ``JacksonThriftSerializerTest`` in apiary-extensions for the Hive 2.3 and 3.1.3 key sets). The 4.x
key sets follow the Hive 4 IDL. Nothing here is produced by ``hivewire.apiary``.

``GOLDEN`` lists ``(name, message, expected event)`` for the seven Apiary types, hivewire's three database
types and the types only the notification log carries (hivewire's own messages, see ``log_messages``), each in
the Hive 2.3, 3.1 and 4.x field sets.
"""

from __future__ import annotations

from typing import Any

from hivewire.events._model import (
    AbortTxnEvent,
    AcidWriteEvent,
    AddCheckConstraintEvent,
    AddDefaultConstraintEvent,
    AddForeignKeyEvent,
    AddNotNullConstraintEvent,
    AddPartitionEvent,
    AddPrimaryKeyEvent,
    AddUniqueConstraintEvent,
    AllocWriteIdEvent,
    AlterCatalogEvent,
    AlterDatabaseEvent,
    AlterPartitionEvent,
    AlterTableEvent,
    CommitCompactionEvent,
    CommitTxnEvent,
    CreateCatalogEvent,
    CreateDatabaseEvent,
    CreateFunctionEvent,
    CreateTableEvent,
    DeletePartitionColumnStatEvent,
    DeleteTableColumnStatEvent,
    DropCatalogEvent,
    DropConstraintEvent,
    DropDatabaseEvent,
    DropFunctionEvent,
    DropPartitionEvent,
    DropTableEvent,
    IcebergCommitEvent,
    InsertEvent,
    ListenerEvent,
    NotificationLogEvent,
    OpenTxnEvent,
    ReloadEvent,
    UpdatePartitionColumnStatEvent,
    UpdateTableColumnStatEvent,
)
from hivewire_thrift.hive_metastore import ttypes as hms

VERSIONS = {"2.3": "2.3.9", "3.1": "3.1.3", "4.0": "4.0.1"}

PARQUET_IN = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
PARQUET_OUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
BASE = "s3://lake/sales.db/orders"

# -- JSON, as the Java listener writes it -------------------------------------------------------------------


def serde_json(version: str) -> dict[str, Any]:
    serde: dict[str, Any] = {
        "name": None,
        "serializationLib": PARQUET_SERDE,
        "parameters": {"serialization.format": "1"},
    }
    if version == "3.1":
        serde.update({"description": None, "serializerClass": None, "deserializerClass": None, "serdeType": None})
    elif version == "4.0":
        serde.update(
            {"description": "parquet", "serializerClass": None, "deserializerClass": None, "serdeType": "HIVE"}
        )
    return serde


def sd_json(version: str, location: str = BASE) -> dict[str, Any]:
    return {
        "cols": [
            {"name": "id", "type": "bigint", "comment": "order id"},
            {"name": "country", "type": "string", "comment": None},
            {"name": "amount", "type": "decimal(10,2)", "comment": "in EUR, ünïcødé ✓"},
        ],
        "location": location,
        "inputFormat": PARQUET_IN,
        "outputFormat": PARQUET_OUT,
        "compressed": False,
        "numBuckets": 4,
        "serdeInfo": serde_json(version),
        "bucketCols": ["id"],
        "sortCols": [{"col": "id", "order": 1}],
        "parameters": {},
        "skewedInfo": {
            "skewedColNames": ["country"],
            "skewedColValues": [["NL"], ["FR"]],
            "skewedColValueLocationMaps": [
                {"key": ["NL"], "value": f"{location}/country=NL"},
                {"key": ["FR"], "value": f"{location}/country=FR"},
            ],
        },
        "storedAsSubDirectories": True,
    }


PRIVILEGES_JSON = {
    "userPrivileges": {
        "alice": [
            {
                "privilege": "SELECT",
                "createTime": 1717000000,
                "grantor": "admin",
                "grantorType": "USER",
                "grantOption": False,
            }
        ]
    },
    "groupPrivileges": None,
    "rolePrivileges": {
        "analysts": [
            {
                "privilege": "SELECT",
                "createTime": 1717000001,
                "grantor": "admin",
                "grantorType": "ROLE",
                "grantOption": True,
            },
            {
                "privilege": "INSERT",
                "createTime": 1717000002,
                "grantor": None,
                "grantorType": None,
                "grantOption": False,
            },
        ]
    },
}

COLSTATS_JSON = {
    "statsDesc": {
        "isTblLevel": True,
        "dbName": "sales",
        "tableName": "orders",
        "partName": None,
        "lastAnalyzed": 1717171999,
        "catName": "hive",
    },
    "statsObj": [
        {
            "colName": "id",
            "colType": "bigint",
            "statsData": {
                "booleanStats": None,
                "longStats": {
                    "lowValue": 1,
                    "highValue": 9000000000,
                    "numNulls": 0,
                    "numDVs": 120000,
                    "bitVectors": "SExMAQI=",
                    "histogram": None,
                },
                "doubleStats": None,
                "stringStats": None,
                "binaryStats": None,
                "decimalStats": None,
                "dateStats": None,
                "timestampStats": None,
            },
        },
        {
            "colName": "amount",
            "colType": "double",
            "statsData": {
                "booleanStats": None,
                "longStats": None,
                "doubleStats": {
                    "lowValue": 0.5,
                    "highValue": 99.25,
                    "numNulls": 3,
                    "numDVs": 17,
                    "bitVectors": None,
                    "histogram": None,
                },
                "stringStats": None,
                "binaryStats": None,
                "decimalStats": None,
                "dateStats": None,
                "timestampStats": None,
            },
        },
    ],
    "isStatsCompliant": True,
    "engine": "hive",
}


def table_json(version: str, name: str = "orders", *, privileges: bool = True) -> dict[str, Any]:
    table: dict[str, Any] = {
        "tableName": name,
        "dbName": "sales",
        "owner": "etl",
        "createTime": 1717171717,
        "lastAccessTime": 0,
        "retention": 0,
        "sd": sd_json(version),
        "partitionKeys": [{"name": "dt", "type": "string", "comment": "day"}],
        "parameters": {"EXTERNAL": "TRUE", "transient_lastDdlTime": "1717171717", "comment": "<orders> & co"},
        "viewOriginalText": None,
        "viewExpandedText": None,
        "tableType": "EXTERNAL_TABLE",
        "privileges": PRIVILEGES_JSON if privileges else None,
        "temporary": False,
        "rewriteEnabled": False,
    }
    if version in ("3.1", "4.0"):
        table.update({"creationMetadata": None, "catName": "hive", "ownerType": "USER"})
    if version == "4.0":
        table.update(
            {
                "writeId": 12,
                "isStatsCompliant": True,
                "colStats": COLSTATS_JSON,
                "accessType": 8,
                "requiredReadCapabilities": ["HIVEFULLACIDREAD"],
                "requiredWriteCapabilities": None,
                "id": 4711,
                "fileMetadata": {"type": 1, "version": 1, "data": ["AAEC"]},
                "dictionary": {"values": {"owners": ["ZXRs", ""]}},
                "txnId": 0,
            }
        )
    return table


def partition_json(version: str, dt: str, *, num_rows: str = "100") -> dict[str, Any]:
    partition: dict[str, Any] = {
        "values": [dt],
        "dbName": "sales",
        "tableName": "orders",
        "createTime": 1717200000,
        "lastAccessTime": 0,
        "sd": sd_json(version, f"{BASE}/dt={dt}"),
        "parameters": {"numFiles": "1", "numRows": num_rows, "transient_lastDdlTime": "1717200000"},
        "privileges": None,
    }
    if version in ("3.1", "4.0"):
        partition["catName"] = "hive"
    if version == "4.0":
        partition.update({"writeId": 13, "isStatsCompliant": False, "colStats": None, "fileMetadata": None})
    return partition


def database_json(version: str, *, description: str = "Sales data") -> dict[str, Any]:
    database: dict[str, Any] = {
        "name": "sales",
        "description": description,
        "locationUri": "s3://lake/sales.db",
        "parameters": {"owner.team": "sales"},
        "privileges": None,
        "ownerName": "etl",
        "ownerType": "ROLE",
    }
    if version in ("3.1", "4.0"):
        database["catalogName"] = "hive"
    if version == "4.0":
        database.update(
            {
                "createTime": 1717000000,
                "managedLocationUri": None,
                "type": "NATIVE",
                "connector_name": None,
                "remote_dbname": None,
            }
        )
    return database


CONTEXT_JSON = {"properties": {"DO_NOT_UPDATE_STATS": "true"}}


def envelope(
    event_type: str,
    version: str,
    *,
    table_name: str | None = "orders",
    status: bool = True,
    context: dict[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    return {
        "eventType": event_type,
        "databaseName": "sales",
        "tableName": table_name,
        "qualifiedTableName": f"sales.{table_name}" if table_name else "sales",
        "status": status,
        "parameters": {"hive.version": VERSIONS[version], "DB_NOTIFICATION_EVENT_ID_KEY_NAME": "42"},
        "environmentContext": context,
        **fields,
    }


NOTIFICATION_JSON = {
    "eventId": 42,
    "eventTime": 1717171717,
    "eventType": "ALLOC_WRITE_ID_EVENT",
    "dbName": "sales",
    "tableName": "orders",
    "message": '{"txnIds":[7],"dbName":"sales","tableName":"orders","txnToWriteIdList":[],"timestamp":1717171717}',
    "messageFormat": "json-0.2",
    "catName": None,
}


def messages(version: str) -> dict[str, dict[str, Any]]:
    """The ten messages of one Hive field set, by event type."""
    table, p1, p2 = table_json(version), partition_json(version, "2024-05-01"), partition_json(version, "2024-05-02")
    return {
        "ON_CREATE_TABLE": envelope("ON_CREATE_TABLE", version, context=CONTEXT_JSON, table=table),
        "ON_ALTER_TABLE": envelope(
            "ON_ALTER_TABLE", version, oldTable=table_json(version, "orders_staging", privileges=False), newTable=table
        ),
        "ON_DROP_TABLE": envelope("ON_DROP_TABLE", version, status=False, table=table, deleteData=True),
        "ON_ADD_PARTITION": envelope("ON_ADD_PARTITION", version, table=table, partitions=[p1, p2]),
        "ON_ALTER_PARTITION": envelope(
            "ON_ALTER_PARTITION",
            version,
            context=CONTEXT_JSON,
            table=table,
            oldPartition=p1,
            newPartition=partition_json(version, "2024-05-01", num_rows="250"),
        ),
        "ON_DROP_PARTITION": envelope("ON_DROP_PARTITION", version, table=table, partitions=[p2], deleteData=False),
        "ON_INSERT": envelope(
            "ON_INSERT",
            version,
            partitionKeyValues={"dt": "2024-05-01"},
            files=[f"{BASE}/dt=2024-05-01/part-00000.parquet", f"{BASE}/dt=2024-05-01/part-00001.parquet"],
            fileChecksums=["9f2c", "77ab"],
        ),
        "ON_CREATE_DATABASE": envelope("ON_CREATE_DATABASE", version, table_name=None, database=database_json(version)),
        "ON_ALTER_DATABASE": envelope(
            "ON_ALTER_DATABASE",
            version,
            table_name=None,
            oldDatabase=database_json(version, description="old"),
            newDatabase=database_json(version),
        ),
        "ON_DROP_DATABASE": envelope("ON_DROP_DATABASE", version, table_name=None, database=database_json(version)),
        # hivewire's own: a notification-log entry with no class of its own (see hivewire.events._notification)
        "ON_NOTIFICATION_LOG": envelope("ON_NOTIFICATION_LOG", version, notification=NOTIFICATION_JSON),
        # hivewire's own: an Iceberg commit, which the runtime derives from the table's ALTER_TABLE
        "ON_ICEBERG_COMMIT": envelope(
            "ON_ICEBERG_COMMIT",
            version,
            table=table,
            previousMetadataLocation="file:/nonexistent/hivewire-golden/metadata/00001.metadata.json",
            metadataLocation="file:/nonexistent/hivewire-golden/metadata/00002.metadata.json",
        ),
        **log_messages(version),
    }


# -- The notification log's own types, in hivewire's messages (Apiary has none of them) ------------------------

FUNCTION_JSON = {
    "functionName": "to_cents",
    "dbName": "sales",
    "className": "com.example.udf.ToCents",
    "ownerName": "etl",
    "ownerType": "USER",
    "createTime": 1717171717,
    "functionType": "JAVA",
    "resourceUris": [{"resourceType": "JAR", "uri": "s3://lake/libs/udfs.jar"}],
    "catName": "hive",
}
CONSTRAINT_FLAGS = {"enable_cstr": False, "validate_cstr": False, "rely_cstr": True}
PRIMARY_KEY_JSON = {
    "table_db": "sales",
    "table_name": "orders",
    "column_name": "id",
    "key_seq": 1,
    "pk_name": "pk_orders",
    **CONSTRAINT_FLAGS,
    "catName": "hive",
}
FOREIGN_KEY_JSON = {
    "pktable_db": "sales",
    "pktable_name": "customers",
    "pkcolumn_name": "id",
    "fktable_db": "sales",
    "fktable_name": "orders",
    "fkcolumn_name": "customer_id",
    "key_seq": 1,
    "update_rule": 0,
    "delete_rule": 0,
    "fk_name": "fk_orders_customer",
    "pk_name": "pk_customers",
    **CONSTRAINT_FLAGS,
    "catName": "hive",
}
COLUMN = {"catName": "hive", "table_db": "sales", "table_name": "orders"}
UNIQUE_JSON = {**COLUMN, "column_name": "order_ref", "key_seq": 1, "uk_name": "uk_orders_ref", **CONSTRAINT_FLAGS}
NOT_NULL_JSON = {**COLUMN, "column_name": "id", "nn_name": "nn_orders_id", **CONSTRAINT_FLAGS}
DEFAULT_JSON = {**COLUMN, "column_name": "amount", "default_value": "0", "dc_name": "dc_amount", **CONSTRAINT_FLAGS}
CHECK_JSON = {
    **COLUMN,
    "column_name": "amount",
    "check_expression": "amount >= 0",
    "dc_name": "cc_amount",
    **CONSTRAINT_FLAGS,
}


def catalog_json(description: str) -> dict[str, Any]:
    return {"name": "spark", "description": description, "locationUri": "s3://lake/spark", "createTime": 1717171000}


def log_messages(version: str) -> dict[str, dict[str, Any]]:
    """hivewire's messages of the notification log's own types (what the notification-log source's records hold)."""
    table, p1 = table_json(version), partition_json(version, "2024-05-01")
    no_db = {"databaseName": "", "qualifiedTableName": ""}  # transactions and catalogs name no database
    return {
        "ON_CREATE_FUNCTION": envelope("ON_CREATE_FUNCTION", version, table_name=None, function=FUNCTION_JSON),
        "ON_DROP_FUNCTION": envelope("ON_DROP_FUNCTION", version, table_name=None, functionName="to_cents"),
        "ON_RELOAD": envelope("ON_RELOAD", version, table=table, partition=p1, refreshEvent=True),
        "ON_ADD_PRIMARYKEY": envelope("ON_ADD_PRIMARYKEY", version, primaryKeys=[PRIMARY_KEY_JSON]),
        "ON_ADD_FOREIGNKEY": envelope(
            "ON_ADD_FOREIGNKEY", version, table_name="customers", foreignKeys=[FOREIGN_KEY_JSON]
        ),
        "ON_ADD_UNIQUECONSTRAINT": envelope("ON_ADD_UNIQUECONSTRAINT", version, uniqueConstraints=[UNIQUE_JSON]),
        "ON_ADD_NOTNULLCONSTRAINT": envelope("ON_ADD_NOTNULLCONSTRAINT", version, notNullConstraints=[NOT_NULL_JSON]),
        "ON_ADD_DEFAULTCONSTRAINT": envelope("ON_ADD_DEFAULTCONSTRAINT", version, defaultConstraints=[DEFAULT_JSON]),
        "ON_ADD_CHECKCONSTRAINT": envelope("ON_ADD_CHECKCONSTRAINT", version, checkConstraints=[CHECK_JSON]),
        "ON_DROP_CONSTRAINT": envelope("ON_DROP_CONSTRAINT", version, constraintName="uk_orders_ref"),
        "ON_CREATE_CATALOG": envelope("ON_CREATE_CATALOG", version, table_name=None, **no_db, catalog="spark"),
        "ON_ALTER_CATALOG": envelope(
            "ON_ALTER_CATALOG",
            version,
            table_name=None,
            **no_db,
            oldCatalog=catalog_json("Spark"),
            newCatalog=catalog_json("Spark's tables"),
        ),
        "ON_DROP_CATALOG": envelope("ON_DROP_CATALOG", version, table_name=None, **no_db, catalog="spark"),
        "ON_OPEN_TXN": envelope("ON_OPEN_TXN", version, table_name=None, **no_db, txnIds=[42, 43]),
        "ON_COMMIT_TXN": envelope(
            "ON_COMMIT_TXN",
            version,
            table_name=None,
            **no_db,
            txnId=42,
            writeIds=[7],
            databases=["sales"],
            tables=["orders"],
            partitions=["dt=2024-05-01"],
            tableObjs=[table],
            partitionObjs=[p1],
            files=[f"{BASE}/dt=2024-05-01/delta_0000007_0000007/bucket_00000"],
        ),
        "ON_ABORT_TXN": envelope("ON_ABORT_TXN", version, table_name=None, **no_db, txnId=43, dbsUpdated=["sales"]),
        "ON_ALLOC_WRITE_ID": envelope(
            "ON_ALLOC_WRITE_ID", version, txnToWriteIds=[{"txnId": 42, "writeId": 7}, {"txnId": 43, "writeId": 8}]
        ),
        "ON_ACID_WRITE": envelope(
            "ON_ACID_WRITE",
            version,
            txnId=42,
            writeId=7,
            partition="dt=2024-05-01",
            files=[f"{BASE}/dt=2024-05-01/delta_0000007_0000007/bucket_00000"],
            table=table,
            partitionObj=p1,
        ),
        "ON_UPDATE_TABLE_COLUMN_STAT": envelope(
            "ON_UPDATE_TABLE_COLUMN_STAT",
            version,
            colStats=COLSTATS_JSON,
            writeId=0,
            tableParameters={"COLUMN_STATS_ACCURATE": '{"COLUMN_STATS":{"id":"true"}}'},
            table=table,
        ),
        "ON_DELETE_TABLE_COLUMN_STAT": envelope("ON_DELETE_TABLE_COLUMN_STAT", version, colName="amount"),
        "ON_UPDATE_PARTITION_COLUMN_STAT": envelope(
            "ON_UPDATE_PARTITION_COLUMN_STAT",
            version,
            colStats=COLSTATS_JSON,
            writeId=7,
            partitionParameters={"numRows": "100"},
            partVals=["2024-05-01"],
            table=table,
        ),
        "ON_DELETE_PARTITION_COLUMN_STAT": envelope(
            "ON_DELETE_PARTITION_COLUMN_STAT",
            version,
            colName="amount",
            partName="dt=2024-05-01",
            partValues=["2024-05-01"],
        ),
        "ON_COMMIT_COMPACTION": envelope(
            "ON_COMMIT_COMPACTION", version, txnId=44, compactionId=5, type="MAJOR", partName="dt=2024-05-01"
        ),
    }


# -- The same content as Thrift objects, written out by hand -----------------------------------------------


def expected_serde(version: str) -> Any:
    if version == "4.0":
        return hms.SerDeInfo(
            name=None,
            serializationLib=PARQUET_SERDE,
            parameters={"serialization.format": "1"},
            description="parquet",
            serdeType=hms.SerdeType.HIVE,
        )
    return hms.SerDeInfo(name=None, serializationLib=PARQUET_SERDE, parameters={"serialization.format": "1"})


def expected_sd(version: str, location: str = BASE) -> Any:
    return hms.StorageDescriptor(
        cols=[
            hms.FieldSchema(name="id", type="bigint", comment="order id"),
            hms.FieldSchema(name="country", type="string", comment=None),
            hms.FieldSchema(name="amount", type="decimal(10,2)", comment="in EUR, ünïcødé ✓"),
        ],
        location=location,
        inputFormat=PARQUET_IN,
        outputFormat=PARQUET_OUT,
        compressed=False,
        numBuckets=4,
        serdeInfo=expected_serde(version),
        bucketCols=["id"],
        sortCols=[hms.Order(col="id", order=1)],
        parameters={},
        skewedInfo=hms.SkewedInfo(
            skewedColNames=["country"],
            skewedColValues=[["NL"], ["FR"]],
            skewedColValueLocationMaps={("NL",): f"{location}/country=NL", ("FR",): f"{location}/country=FR"},
        ),
        storedAsSubDirectories=True,
    )


EXPECTED_PRIVILEGES = hms.PrincipalPrivilegeSet(
    userPrivileges={
        "alice": [
            hms.PrivilegeGrantInfo(
                privilege="SELECT",
                createTime=1717000000,
                grantor="admin",
                grantorType=hms.PrincipalType.USER,
                grantOption=False,
            )
        ]
    },
    groupPrivileges=None,
    rolePrivileges={
        "analysts": [
            hms.PrivilegeGrantInfo(
                privilege="SELECT",
                createTime=1717000001,
                grantor="admin",
                grantorType=hms.PrincipalType.ROLE,
                grantOption=True,
            ),
            hms.PrivilegeGrantInfo(
                privilege="INSERT", createTime=1717000002, grantor=None, grantorType=None, grantOption=False
            ),
        ]
    },
)

EXPECTED_COLSTATS = hms.ColumnStatistics(
    statsDesc=hms.ColumnStatisticsDesc(
        isTblLevel=True, dbName="sales", tableName="orders", partName=None, lastAnalyzed=1717171999, catName="hive"
    ),
    statsObj=[
        hms.ColumnStatisticsObj(
            colName="id",
            colType="bigint",
            statsData=hms.ColumnStatisticsData(
                longStats=hms.LongColumnStatsData(
                    lowValue=1,
                    highValue=9000000000,
                    numNulls=0,
                    numDVs=120000,
                    bitVectors=b"HLL\x01\x02",
                    histogram=None,
                )
            ),
        ),
        hms.ColumnStatisticsObj(
            colName="amount",
            colType="double",
            statsData=hms.ColumnStatisticsData(
                doubleStats=hms.DoubleColumnStatsData(lowValue=0.5, highValue=99.25, numNulls=3, numDVs=17)
            ),
        ),
    ],
    isStatsCompliant=True,
    engine="hive",
)


def expected_table(version: str, name: str = "orders", *, privileges: bool = True) -> Any:
    table = hms.Table(
        tableName=name,
        dbName="sales",
        owner="etl",
        createTime=1717171717,
        lastAccessTime=0,
        retention=0,
        sd=expected_sd(version),
        partitionKeys=[hms.FieldSchema(name="dt", type="string", comment="day")],
        parameters={"EXTERNAL": "TRUE", "transient_lastDdlTime": "1717171717", "comment": "<orders> & co"},
        viewOriginalText=None,
        viewExpandedText=None,
        tableType="EXTERNAL_TABLE",
        privileges=EXPECTED_PRIVILEGES if privileges else None,
        temporary=False,
        rewriteEnabled=False,
    )
    # 2.3 messages have no key for fields 16+: they keep the Thrift defaults (ownerType USER, writeId -1).
    if version in ("3.1", "4.0"):
        table.creationMetadata, table.catName, table.ownerType = None, "hive", hms.PrincipalType.USER
    if version == "4.0":
        table.writeId, table.isStatsCompliant, table.colStats = 12, True, EXPECTED_COLSTATS
        table.accessType, table.requiredReadCapabilities = 8, ["HIVEFULLACIDREAD"]
        table.requiredWriteCapabilities = None
        table.id, table.txnId = 4711, 0
        table.fileMetadata = hms.FileMetadata(type=1, version=1, data=[b"\x00\x01\x02"])
        table.dictionary = hms.ObjectDictionary(values={"owners": [b"etl", b""]})
    return table


def expected_partition(version: str, dt: str, *, num_rows: str = "100") -> Any:
    partition = hms.Partition(
        values=[dt],
        dbName="sales",
        tableName="orders",
        createTime=1717200000,
        lastAccessTime=0,
        sd=expected_sd(version, f"{BASE}/dt={dt}"),
        parameters={"numFiles": "1", "numRows": num_rows, "transient_lastDdlTime": "1717200000"},
        privileges=None,
    )
    if version in ("3.1", "4.0"):
        partition.catName = "hive"
    if version == "4.0":
        partition.writeId, partition.isStatsCompliant = 13, False
        partition.colStats = partition.fileMetadata = None
    return partition


def expected_database(version: str, *, description: str = "Sales data") -> Any:
    database = hms.Database(
        name="sales",
        description=description,
        locationUri="s3://lake/sales.db",
        parameters={"owner.team": "sales"},
        privileges=None,
        ownerName="etl",
        ownerType=hms.PrincipalType.ROLE,
    )
    if version in ("3.1", "4.0"):
        database.catalogName = "hive"
    if version == "4.0":
        database.createTime, database.managedLocationUri, database.type = 1717000000, None, hms.DatabaseType.NATIVE
        database.connector_name, database.remote_dbname = None, None
    return database


def expected_events(version: str) -> dict[str, ListenerEvent]:
    params = {"hive.version": VERSIONS[version], "DB_NOTIFICATION_EVENT_ID_KEY_NAME": "42"}
    context = hms.EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true"})
    table = expected_table(version)
    p1, p2 = expected_partition(version, "2024-05-01"), expected_partition(version, "2024-05-02")
    return {
        "ON_CREATE_TABLE": CreateTableEvent(table=table, parameters=params, environment_context=context),
        "ON_ALTER_TABLE": AlterTableEvent(
            old_table=expected_table(version, "orders_staging", privileges=False), new_table=table, parameters=params
        ),
        "ON_DROP_TABLE": DropTableEvent(table=table, delete_data=True, status=False, parameters=params),
        "ON_ADD_PARTITION": AddPartitionEvent(table=table, partitions=[p1, p2], parameters=params),
        "ON_ALTER_PARTITION": AlterPartitionEvent(
            table=table,
            old_partition=p1,
            new_partition=expected_partition(version, "2024-05-01", num_rows="250"),
            parameters=params,
            environment_context=context,
        ),
        "ON_DROP_PARTITION": DropPartitionEvent(table=table, partitions=[p2], delete_data=False, parameters=params),
        "ON_INSERT": InsertEvent(
            db_name="sales",
            table_name="orders",
            partition_key_values={"dt": "2024-05-01"},
            files=[f"{BASE}/dt=2024-05-01/part-00000.parquet", f"{BASE}/dt=2024-05-01/part-00001.parquet"],
            file_checksums=["9f2c", "77ab"],
            parameters=params,
        ),
        "ON_CREATE_DATABASE": CreateDatabaseEvent(database=expected_database(version), parameters=params),
        "ON_ALTER_DATABASE": AlterDatabaseEvent(
            old_database=expected_database(version, description="old"),
            new_database=expected_database(version),
            parameters=params,
        ),
        "ON_DROP_DATABASE": DropDatabaseEvent(database=expected_database(version), parameters=params),
        "ON_NOTIFICATION_LOG": NotificationLogEvent(
            notification=hms.NotificationEvent(**NOTIFICATION_JSON),
            db_name="sales",
            table_name="orders",
            parameters=params,
        ),
        "ON_ICEBERG_COMMIT": IcebergCommitEvent(
            table=table,
            previous_metadata_location="file:/nonexistent/hivewire-golden/metadata/00001.metadata.json",
            metadata_location="file:/nonexistent/hivewire-golden/metadata/00002.metadata.json",
            parameters=params,
        ),
        **expected_log_events(version, params),
    }


EXPECTED_FUNCTION = hms.Function(
    functionName="to_cents",
    dbName="sales",
    className="com.example.udf.ToCents",
    ownerName="etl",
    ownerType=hms.PrincipalType.USER,
    createTime=1717171717,
    functionType=hms.FunctionType.JAVA,
    resourceUris=[hms.ResourceUri(resourceType=hms.ResourceType.JAR, uri="s3://lake/libs/udfs.jar")],
    catName="hive",
)
FLAGS = {"enable_cstr": False, "validate_cstr": False, "rely_cstr": True}
IN_ORDERS = {"catName": "hive", "table_db": "sales", "table_name": "orders"}


def expected_catalog(description: str) -> Any:
    return hms.Catalog(name="spark", description=description, locationUri="s3://lake/spark", createTime=1717171000)


def expected_log_events(version: str, params: dict[str, str]) -> dict[str, ListenerEvent]:
    table, p1 = expected_table(version), expected_partition(version, "2024-05-01")
    names = {"db_name": "sales", "table_name": "orders", "parameters": params}
    no_db = {"db_name": "", "parameters": params}
    files = [f"{BASE}/dt=2024-05-01/delta_0000007_0000007/bucket_00000"]
    return {
        "ON_CREATE_FUNCTION": CreateFunctionEvent(function=EXPECTED_FUNCTION, db_name="sales", parameters=params),
        "ON_DROP_FUNCTION": DropFunctionEvent(function_name="to_cents", db_name="sales", parameters=params),
        "ON_RELOAD": ReloadEvent(table=table, partition=p1, refresh_event=True, **names),
        "ON_ADD_PRIMARYKEY": AddPrimaryKeyEvent(
            primary_keys=[
                hms.SQLPrimaryKey(
                    table_db="sales",
                    table_name="orders",
                    column_name="id",
                    key_seq=1,
                    pk_name="pk_orders",
                    catName="hive",
                    **FLAGS,
                )
            ],
            **names,
        ),
        "ON_ADD_FOREIGNKEY": AddForeignKeyEvent(
            foreign_keys=[
                hms.SQLForeignKey(
                    pktable_db="sales",
                    pktable_name="customers",
                    pkcolumn_name="id",
                    fktable_db="sales",
                    fktable_name="orders",
                    fkcolumn_name="customer_id",
                    key_seq=1,
                    update_rule=0,
                    delete_rule=0,
                    fk_name="fk_orders_customer",
                    pk_name="pk_customers",
                    catName="hive",
                    **FLAGS,
                )
            ],
            db_name="sales",
            table_name="customers",
            parameters=params,
        ),
        "ON_ADD_UNIQUECONSTRAINT": AddUniqueConstraintEvent(
            unique_constraints=[
                hms.SQLUniqueConstraint(
                    **IN_ORDERS, column_name="order_ref", key_seq=1, uk_name="uk_orders_ref", **FLAGS
                )
            ],
            **names,
        ),
        "ON_ADD_NOTNULLCONSTRAINT": AddNotNullConstraintEvent(
            not_null_constraints=[
                hms.SQLNotNullConstraint(**IN_ORDERS, column_name="id", nn_name="nn_orders_id", **FLAGS)
            ],
            **names,
        ),
        "ON_ADD_DEFAULTCONSTRAINT": AddDefaultConstraintEvent(
            default_constraints=[
                hms.SQLDefaultConstraint(
                    **IN_ORDERS, column_name="amount", default_value="0", dc_name="dc_amount", **FLAGS
                )
            ],
            **names,
        ),
        "ON_ADD_CHECKCONSTRAINT": AddCheckConstraintEvent(
            check_constraints=[
                hms.SQLCheckConstraint(
                    **IN_ORDERS, column_name="amount", check_expression="amount >= 0", dc_name="cc_amount", **FLAGS
                )
            ],
            **names,
        ),
        "ON_DROP_CONSTRAINT": DropConstraintEvent(constraint_name="uk_orders_ref", **names),
        "ON_CREATE_CATALOG": CreateCatalogEvent(catalog="spark", **no_db),
        "ON_ALTER_CATALOG": AlterCatalogEvent(
            old_catalog=expected_catalog("Spark"), new_catalog=expected_catalog("Spark's tables"), **no_db
        ),
        "ON_DROP_CATALOG": DropCatalogEvent(catalog="spark", **no_db),
        "ON_OPEN_TXN": OpenTxnEvent(txn_ids=[42, 43], **no_db),
        "ON_COMMIT_TXN": CommitTxnEvent(
            txn_id=42,
            write_ids=[7],
            databases=["sales"],
            tables=["orders"],
            partitions=["dt=2024-05-01"],
            table_objs=[table],
            partition_objs=[p1],
            files=files,
            **no_db,
        ),
        "ON_ABORT_TXN": AbortTxnEvent(txn_id=43, dbs_updated=["sales"], **no_db),
        "ON_ALLOC_WRITE_ID": AllocWriteIdEvent(
            txn_to_write_ids=[hms.TxnToWriteId(txnId=42, writeId=7), hms.TxnToWriteId(txnId=43, writeId=8)], **names
        ),
        "ON_ACID_WRITE": AcidWriteEvent(
            txn_id=42, write_id=7, partition="dt=2024-05-01", files=files, table=table, partition_obj=p1, **names
        ),
        "ON_UPDATE_TABLE_COLUMN_STAT": UpdateTableColumnStatEvent(
            col_stats=EXPECTED_COLSTATS,
            write_id=0,
            table_parameters={"COLUMN_STATS_ACCURATE": '{"COLUMN_STATS":{"id":"true"}}'},
            table=table,
            **names,
        ),
        "ON_DELETE_TABLE_COLUMN_STAT": DeleteTableColumnStatEvent(col_name="amount", **names),
        "ON_UPDATE_PARTITION_COLUMN_STAT": UpdatePartitionColumnStatEvent(
            col_stats=EXPECTED_COLSTATS,
            write_id=7,
            partition_parameters={"numRows": "100"},
            part_vals=["2024-05-01"],
            table=table,
            **names,
        ),
        "ON_DELETE_PARTITION_COLUMN_STAT": DeletePartitionColumnStatEvent(
            col_name="amount", part_name="dt=2024-05-01", part_values=["2024-05-01"], **names
        ),
        "ON_COMMIT_COMPACTION": CommitCompactionEvent(
            txn_id=44, compaction_id=5, type="MAJOR", part_name="dt=2024-05-01", **names
        ),
    }


GOLDEN: list[tuple[str, dict[str, Any], ListenerEvent]] = [
    (f"{event_type}-hive{version}", message, expected_events(version)[event_type])
    for version in VERSIONS
    for event_type, message in messages(version).items()
]
