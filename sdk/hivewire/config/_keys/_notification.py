"""The notification-log source's keys (``NotificationLogSource``, ``hivewire bridge``)."""

from __future__ import annotations

from hivewire.config._keys._registry import key as _key
from hivewire.config._keys._registry import prefix as _prefix
from hivewire.config._keys._registry import section as _section
from hivewire.config._kinds import Choice, Duration, Flag, Integer, Path

NOTIFICATION = _section(
    "Notification log (`NotificationLogSource`, `hivewire bridge`)",
    "Reading the metastore's own event feed (Hive's `DbNotificationListener`) through `get_next_notification`.",
)
NOTIFICATION_POSITION_FILE = _key(
    NOTIFICATION,
    "hivewire.notification.position.file",
    Path(),
    "Where the last event id handled is kept across restarts (one reader per file).",
    default="hivewire-notification.position",
)
NOTIFICATION_START = _key(
    NOTIFICATION,
    "hivewire.notification.start",
    Choice(("earliest", "latest")),
    "Where a reader without a position starts: the oldest event the log keeps, or the next one written.",
    default="earliest",
)
NOTIFICATION_BATCH_SIZE = _key(
    NOTIFICATION,
    "hivewire.notification.batch.size",
    Integer(1, 100000),
    "Events asked for per `get_next_notification` call.",
    default="500",
)
NOTIFICATION_POLL_INTERVAL = _key(
    NOTIFICATION,
    "hivewire.notification.poll.interval",
    Duration("s", positive=True),
    "How long to wait before asking again when the log had nothing new.",
    default="1",
)
NOTIFICATION_ON_GAP = _key(
    NOTIFICATION,
    "hivewire.notification.on.gap",
    Choice(("continue", "stop")),
    "What to do when events were removed from the log before they were read (the position fell behind "
    "`hive.metastore.event.db.listener.timetolive`): report and go on, or report and stop.",
    default="continue",
)

BRIDGE_DATABASE_EVENTS = _key(
    NOTIFICATION,
    "hivewire.bridge.database.events",
    Flag(),
    "Publish database events (`false` for consumers that know only Apiary's seven types: Drone Fly, Apiary's "
    "receiver).",
    default="true",
)
BRIDGE_PRODUCER_PREFIX = _prefix(
    NOTIFICATION,
    "hivewire.bridge.producer.",
    "librdkafka producer properties for `hivewire bridge` (`security.protocol`, `compression.type`, ...).",
)
