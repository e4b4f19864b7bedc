"""Runs ``hivewire.spark.session`` against Hive 4 metastores found in ZooKeeper, in a process of its own (so
its JVM's Hive client is the one asked for): ``python spark_hive4_session.py QUORUM NAMESPACE WAREHOUSE
[CLASSPATH]``.

Without CLASSPATH, Spark's built-in Hive 2.3 client: prints ``REFUSED <message as JSON> ACTIVE <bool>`` (the
ConfigError, and whether a session is still running), then for a session started with Spark's own builder
``RUNNING REFUSED <message> ACTIVE <bool>`` and, asked for Hive 4.0's client, ``VERSION REFUSED <message>``,
and exits 0; or ``... NOT REFUSED`` and exits 1. With it
(``os.pathsep``-separated jars of Hive 4.0.1's client), ``metastore_version="4.0.1"``: creates a database and
a table, inserts a row and prints ``ROWS`` and the rows read back as JSON."""

from __future__ import annotations

import json
import os
import sys
import uuid

from pyspark.sql import SparkSession

import hivewire.spark
from hivewire.errors import ConfigError, HivewireError


def main(quorum: str, namespace: str, warehouse: str, classpath: str | None = None) -> int:
    conf = {"spark.sql.warehouse.dir": warehouse, "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}
    if classpath is None:
        try:
            hivewire.spark.session(zookeeper=quorum, namespace=namespace, master="local[1]", conf=conf)
        except ConfigError as e:
            print("REFUSED", json.dumps(str(e)), "ACTIVE", SparkSession.getActiveSession() is not None)
        else:
            print("NOT REFUSED")
            return 1
        # A session the user started (Spark's own builder, the built-in client) is refused too, and left running.
        hivewire.spark.builder(zookeeper=quorum, namespace=namespace, master="local[1]", conf=conf).getOrCreate()
        try:
            hivewire.spark.session(zookeeper=quorum, namespace=namespace)
        except ConfigError as e:
            print("RUNNING REFUSED", json.dumps(str(e)), "ACTIVE", SparkSession.getActiveSession() is not None)
        else:
            print("RUNNING NOT REFUSED")
            return 1
        # Asking it for another Hive client than it runs is refused before the metastore is asked anything.
        try:
            hivewire.spark.session(zookeeper=quorum, namespace=namespace, metastore_version="4.0.1")
        except HivewireError as e:
            print("VERSION REFUSED", json.dumps(str(e)))
        else:
            print("VERSION NOT REFUSED")
            return 1
        return 0
    # The test's two metastores keep separate stores (a Derby each), unlike a deployment's: Hive 4's client,
    # which picks a URI at random per connection by default, must keep to one of them here.
    conf["spark.hadoop.metastore.thrift.uri.selection"] = "SEQUENTIAL"
    conf["spark.sql.hive.metastore.jars"] = "path"
    conf["spark.sql.hive.metastore.jars.path"] = ",".join(f"file://{jar}" for jar in classpath.split(os.pathsep))
    spark = hivewire.spark.session(
        zookeeper=quorum, namespace=namespace, master="local[1]", conf=conf, metastore_version="4.0.1"
    )
    db = f"s{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE DATABASE {db}")
    spark.sql(f"CREATE TABLE {db}.t (a INT, b STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {db}.t VALUES (1, 'x'), (2, 'y')")
    rows = [list(row) for row in spark.sql(f"SELECT a, b FROM {db}.t ORDER BY a").collect()]
    print("ROWS", json.dumps(rows))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
