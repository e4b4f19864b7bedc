"""Runs PySpark 4's DDL and DML against a metastore (run by test_shim_fidelity in its own process, so its
JVM's Hive client talks only to the shim under test): ``python spark_statements.py URI WAREHOUSE DB
[HIVE_VERSION CLASSPATH]``.

Without HIVE_VERSION, Spark's built-in Hive 2.3 client; with it, Spark's client for that release
(``spark.sql.hive.metastore.version``) loaded from CLASSPATH (``os.pathsep``-separated jars, given as
``spark.sql.hive.metastore.jars.path``). After the statements, the rows of the tables the workload reads
back are printed as one JSON line starting ``ROWS ``, every statement with its rows (the database name as
``DB``), so that runs directly and through the shim can be compared; a TRUNCATE Spark refuses as
``CANNOT_TRUNCATE_EXTERNAL_TABLE`` has ``[["ERROR", condition]]`` for rows (Hive 4 makes a managed table
external), and every other error fails the run."""

from __future__ import annotations

import json
import os
import sys

from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

uri, warehouse, db = sys.argv[1:4]
builder = SparkSession.builder
if len(sys.argv) > 4:
    hive_version, classpath = sys.argv[4:6]
    jars = ",".join(f"file://{jar}" for jar in classpath.split(os.pathsep))
    builder = (
        builder.config("spark.sql.hive.metastore.version", hive_version)
        .config("spark.sql.hive.metastore.jars", "path")
        .config("spark.sql.hive.metastore.jars.path", jars)
    )
spark = (
    builder.master("local[1]")
    .appName("hivewire-fidelity")
    .config("spark.sql.catalogImplementation", "hive")
    .config("spark.hadoop.hive.metastore.uris", uri)
    .config("spark.sql.warehouse.dir", warehouse)
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "1")
    .config("spark.hadoop.hive.exec.dynamic.partition.mode", "nonstrict")
    .enableHiveSupport()
    .getOrCreate()
)
STATEMENTS = [
    f"CREATE DATABASE {db}",
    f"CREATE TABLE {db}.sales (id INT, amount DOUBLE) PARTITIONED BY (dt STRING) STORED AS PARQUET",
    f"INSERT INTO {db}.sales PARTITION (dt='2024-01-01') VALUES (1, 1.5), (2, 2.5)",
    f"INSERT INTO {db}.sales PARTITION (dt='2024-01-01') VALUES (3, 3.5)",
    f"INSERT INTO {db}.sales PARTITION (dt) VALUES (4, 4.5, '2024-01-02'), (5, 5.5, '2024-01-03')",
    f"ALTER TABLE {db}.sales ADD PARTITION (dt='2024-02-01')",
    f"ALTER TABLE {db}.sales ADD IF NOT EXISTS PARTITION (dt='2024-02-01')",
    f"ALTER TABLE {db}.sales DROP PARTITION (dt='2024-02-01')",
    f"MSCK REPAIR TABLE {db}.sales",
    f"ALTER TABLE {db}.sales RECOVER PARTITIONS",
    f"ALTER TABLE {db}.sales SET TBLPROPERTIES ('team'='core')",
    f"ALTER TABLE {db}.sales UNSET TBLPROPERTIES ('team')",
    f"ALTER TABLE {db}.sales ADD COLUMNS (note STRING)",
    f"CREATE TABLE {db}.plain (id INT, name STRING) STORED AS PARQUET",
    f"INSERT INTO {db}.plain VALUES (1, 'a')",
    f"INSERT OVERWRITE TABLE {db}.plain VALUES (2, 'b')",
    f"CREATE TABLE {db}.ctas STORED AS PARQUET AS SELECT * FROM {db}.sales WHERE dt = '2024-01-01'",
    f"CREATE VIEW {db}.v AS SELECT id FROM {db}.plain",
    f"ALTER VIEW {db}.v AS SELECT id, name FROM {db}.plain",
    f"SELECT * FROM {db}.v",
    f"ALTER TABLE {db}.plain RENAME TO {db}.plain_v2",
    f"TRUNCATE TABLE {db}.plain_v2",
    f"TRUNCATE TABLE {db}.sales PARTITION (dt='2024-01-02')",
    f"SELECT * FROM {db}.sales ORDER BY id",
    f"SHOW PARTITIONS {db}.sales",
    f"SELECT * FROM {db}.ctas ORDER BY id",
    f"SELECT * FROM {db}.plain_v2",
    f"SHOW TABLES IN {db}",
    f"DROP VIEW {db}.v",
    f"DROP TABLE {db}.ctas",
    f"DROP DATABASE {db} CASCADE",
]
rows = []
for statement in STATEMENTS:
    print(statement, flush=True)
    try:
        found = [[str(v).replace(db, "DB") for v in row] for row in spark.sql(statement).collect()]
    except AnalysisException as e:
        if e.getCondition() != "CANNOT_TRUNCATE_EXTERNAL_TABLE":
            raise
        found = [["ERROR", str(e.getCondition())]]  # kept as the statement's result: compared like rows
    rows.append([statement.replace(db, "DB"), found])
spark.stop()
print("ROWS " + json.dumps(rows), flush=True)
