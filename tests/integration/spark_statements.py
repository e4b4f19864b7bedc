"""Runs PySpark 4's DDL and DML against a metastore (run by test_shim_fidelity in its own process, so its
JVM's Hive client talks only to the shim under test): ``python spark_statements.py URI WAREHOUSE DB``."""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession

uri, warehouse, db = sys.argv[1:4]
spark = (
    SparkSession.builder.master("local[1]")
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
    f"ALTER TABLE {db}.plain RENAME TO {db}.plain_v2",
    f"TRUNCATE TABLE {db}.plain_v2",
    f"TRUNCATE TABLE {db}.sales PARTITION (dt='2024-01-02')",
    f"DROP VIEW {db}.v",
    f"DROP TABLE {db}.ctas",
    f"DROP DATABASE {db} CASCADE",
]
for statement in STATEMENTS:
    print(statement, flush=True)
    spark.sql(statement).collect()
spark.stop()
