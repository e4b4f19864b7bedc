"""The Spark history's keys (``hivewire spark-history``)."""

from __future__ import annotations

from hivewire.config._keys._registry import key as _key
from hivewire.config._keys._registry import prefix as _prefix
from hivewire.config._keys._registry import section as _section
from hivewire.config._kinds import Duration, Flag, Integer, Text

SPARK_HISTORY = _section(
    "History on Spark (`hivewire spark-history`)",
    "The streaming history of the topic in a metastore table, written by Spark from the `hivewire` data "
    "source. It reads `apiary.bootstrap.servers`, `apiary.kafka.topic.name` and `apiary.messaging.consumer.*`.",
)
SPARK_HISTORY_TABLE = _key(
    SPARK_HISTORY,
    "hivewire.spark.history.table",
    Text("db.table"),
    "The metastore table of the events: created when missing (parquet, partitioned by `event_date`); its "
    "database must exist.",
)
SPARK_HISTORY_CHECKPOINT = _key(
    SPARK_HISTORY,
    "hivewire.spark.history.checkpoint",
    Text("path or URI"),
    "The streaming checkpoint (the Kafka offsets of every batch): one per table, on storage every restart sees.",
)
SPARK_HISTORY_MAX_EVENTS = _key(
    SPARK_HISTORY,
    "hivewire.spark.history.max.events.per.trigger",
    Integer(1),
    "At most this many messages per micro-batch.",
    default_doc="no bound",
)
SPARK_HISTORY_INTERVAL = _key(
    SPARK_HISTORY,
    "hivewire.spark.history.trigger.interval",
    Duration("s", positive=True),
    "Time between the starts of micro-batches.",
    default="10",
)
SPARK_HISTORY_AVAILABLE_NOW = _key(
    SPARK_HISTORY,
    "hivewire.spark.history.available.now",
    Flag(),
    "Write what the topic holds when the job starts, then exit (for scheduled runs).",
    default="false",
)
SPARK_MASTER = _key(
    SPARK_HISTORY,
    "hivewire.spark.master",
    Text("URL"),
    "Spark master (`local[4]`, `spark://host:7077`, `yarn`).",
    default_doc="Spark's own (`spark-submit`'s, else `local[*]`)",
)
SPARK_ZOOKEEPER = _key(
    SPARK_HISTORY,
    "hivewire.spark.zookeeper",
    Text("quorum"),
    "Find the metastores in ZooKeeper (HIVE-20794) instead of `metastore.thrift.uris`.",
)
SPARK_NAMESPACE = _key(
    SPARK_HISTORY,
    "hivewire.spark.namespace",
    Text("znode name"),
    "Parent znode of the metastores' registrations.",
    default="hive_metastore",
)
SPARK_METASTORE_VERSION = _key(
    SPARK_HISTORY,
    "hivewire.spark.metastore.version",
    Text("release"),
    "The Hive client release Spark talks to the metastore with (`4.0.1` for a Hive 4 metastore, whose tables "
    "Spark's built-in 2.3 client cannot read); Spark downloads its jars from Maven Central on first use unless "
    "`spark.sql.hive.metastore.jars` (through `--conf`) names them.",
    default_doc="Spark's built-in Hive 2.3 client",
)
SPARK_CONF_PREFIX = _prefix(
    SPARK_HISTORY,
    "hivewire.spark.conf.",
    "Spark settings (`spark.executor.memory`, ...); the part after the prefix is passed as written.",
)
