"""The archive's keys (``hivewire archive``)."""

from __future__ import annotations

from hivewire.config._keys._registry import key as _key
from hivewire.config._keys._registry import prefix as _prefix
from hivewire.config._keys._registry import section as _section
from hivewire.config._kinds import Duration, Integer, Text

ARCHIVE = _section(
    "Archive (`hivewire archive`)",
    "The exactly-once Delta archive of the topic. It reads `apiary.bootstrap.servers`, "
    "`apiary.kafka.topic.name` and `apiary.messaging.consumer.*`.",
)
ARCHIVE_TABLE = _key(
    ARCHIVE,
    "hivewire.archive.table",
    Text("path or URI"),
    "The Delta table: a path or a URI (`s3://`, `abfss://`, ...); created when missing.",
)
ARCHIVE_APP_ID = _key(
    ARCHIVE,
    "hivewire.archive.app.id",
    Text("name"),
    "Job name in the table's app transactions; the same for every process of one job.",
    default_doc="the topic",
)
ARCHIVE_GROUP_ID = _key(
    ARCHIVE,
    "hivewire.archive.group.id",
    Text("group"),
    "Kafka consumer group.",
    default_doc="`hivewire-archive-<app id>-<the Delta table's id>`",
)
ARCHIVE_FLUSH_EVENTS = _key(
    ARCHIVE,
    "hivewire.archive.flush.events",
    Integer(1),
    "Write when this many messages are buffered.",
    default="10000",
)
ARCHIVE_FLUSH_INTERVAL = _key(
    ARCHIVE,
    "hivewire.archive.flush.interval",
    Duration("s", positive=True),
    "Write when the oldest buffered message is this old (the latency bound).",
    default="10",
)
ARCHIVE_STORAGE_PREFIX = _prefix(
    ARCHIVE,
    "hivewire.archive.storage.",
    "deltalake storage options (`AWS_REGION`, ...); the part after the prefix is passed as written.",
)
