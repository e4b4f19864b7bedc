"""The listener runtime's keys (``App.run``, ``hivewire run``): retries, concurrency, queues, commits."""

from __future__ import annotations

from hivewire.config._keys._registry import key as _key
from hivewire.config._keys._registry import prefix as _prefix
from hivewire.config._keys._registry import section as _section
from hivewire.config._kinds import Choice, Duration, Flag, Integer, Number, Text

RUNTIME = _section("Listener runtime (`hivewire run`)", "How `App.run` and `hivewire run` handle events.")
DEAD_LETTER_TOPIC = _key(
    RUNTIME,
    "hivewire.dead.letter.topic",
    Text("topic name"),
    "Where events a listener gave up on go.",
    default_doc="`<topic>.dlq`",
)
DEAD_LETTER_PRODUCER_PREFIX = _prefix(
    RUNTIME,
    "hivewire.dead.letter.producer.",
    "librdkafka producer properties of the dead-letter producer (`message.max.bytes`, `acks`, ...); they win "
    "over the security settings it shares with the consumer. A dead letter larger than `message.max.bytes` "
    "(default 1000000) keeps the start of the original, with headers saying so (see the runtime guide).",
)
ICEBERG_IO_PREFIX = _prefix(
    RUNTIME,
    "hivewire.iceberg.",
    "pyiceberg catalog properties for reading Iceberg metadata files (`s3.endpoint`, `s3.access-key-id`, "
    "`py-io-impl`, ...), the part after the prefix as pyiceberg names it; used by `on_iceberg_commit` listeners.",
)
STARTUP_TIMEOUT = _key(
    RUNTIME,
    "hivewire.startup.timeout.ms",
    Duration("ms"),
    "How long `run` and `archive` wait to reach Kafka for the first time (and `run` for its topic to exist) "
    "before failing with a clear error; "
    "0 waits for ever. Later outages are waited out (readiness is DOWN meanwhile).",
    default="60000",
)
RETRY_MAX_ATTEMPTS = _key(
    RUNTIME, "hivewire.retry.max.attempts", Integer(1), "Calls per event, the first included.", default="5"
)
RETRY_INITIAL_DELAY = _key(
    RUNTIME,
    "hivewire.retry.initial.delay.ms",
    Duration("ms"),
    "Wait before the first retry.",
    default="1000",
)
RETRY_MULTIPLIER = _key(
    RUNTIME, "hivewire.retry.multiplier", Number(1.0), "Each wait is the last times this.", default="2.0"
)
RETRY_MAX_DELAY = _key(
    RUNTIME, "hivewire.retry.max.delay.ms", Duration("ms"), "The longest wait between calls.", default="60000"
)
LISTENER_TIMEOUT = _key(
    RUNTIME,
    "hivewire.listener.timeout.ms",
    Duration("ms", positive=True),
    "A call longer than this is a failed attempt (its thread is abandoned).",
    default="300000",
)
LISTENER_CONCURRENCY = _key(
    RUNTIME,
    "hivewire.listener.concurrency",
    Integer(1),
    "Events of one listener in flight at once, never two of one table (a listener's `concurrency=` overrides "
    "it): threads for a plain function, tasks on the runtime's event loop for an `async def` one.",
    default="1",
)
WORKERS = _key(
    RUNTIME,
    "hivewire.workers",
    Integer(1),
    "Processes `hivewire run` starts for the app, in one consumer group, supervised (a dead one is restarted); "
    "worker i serves /metrics and /health on `endpoint.port` + i. For listeners that spend CPU.",
    default="1",
)
MAX_ABANDONED_THREADS = _key(
    RUNTIME,
    "hivewire.listener.max.abandoned.threads",
    Integer(0),
    "Abandoned (timed-out, still running) threads per listener before `/health` reports DOWN.",
    default="8",
)
QUEUE_SIZE = _key(
    RUNTIME,
    "hivewire.listener.queue.size",
    Integer(1),
    "Events held in memory per listener worker; beyond, it spills (or consumption pauses, see `overflow`).",
    default="50000",
)
QUEUE_BYTES = _key(
    RUNTIME,
    "hivewire.listener.queue.bytes",
    Integer(1),
    "Bytes of messages held in memory per listener worker (256 MiB), likewise.",
    default=str(256 * 1024 * 1024),
)
OVERFLOW = _key(
    RUNTIME,
    "hivewire.listener.overflow",
    Choice(("reread", "pause")),
    "A worker over its bounds: `reread` spills (reads its records again from the topic later) while another "
    "keeps up and pauses consumption only when none does; `pause` pauses consumption for all.",
    default="reread",
)
BATCH_SIZE = _key(
    RUNTIME,
    "hivewire.consumer.batch.size",
    Integer(1, 100_000),
    "Records per poll. Drone Fly's `apiary.messaging.consumer.max.poll.records` sets it when this key is not given.",
    default="500",
)
COMMIT_INTERVAL = _key(
    RUNTIME,
    "hivewire.commit.interval.ms",
    Duration("ms", positive=True),
    "How often offsets are committed.",
    default="1000",
)
SHUTDOWN_TIMEOUT = _key(
    RUNTIME,
    "hivewire.shutdown.timeout.ms",
    Duration("ms"),
    "How long a stopping app waits for listeners' current calls.",
    default="30000",
)
GC_TUNING = _key(
    RUNTIME,
    "hivewire.gc.tuning",
    Flag(),
    "While the app runs, Python's cyclic garbage collector runs every 50,000 allocations instead of 700 and "
    "objects from start-up are frozen out of its scans; `false` keeps Python's defaults.",
    default="true",
)
