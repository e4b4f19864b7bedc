"""An exactly-once archive of an Apiary topic in a Delta table, the way kafka-delta-ingest feeds Delta from Kafka.

:class:`Archiver` consumes the topic in a consumer group, buffers the raw messages per partition, and writes
them with ``deltalake`` as rows of :data:`hivewire.arrow.SCHEMA`, partitioned by ``event_date``; each write
decodes its messages with the columnar decoder (:mod:`hivewire.data._columnar`), straight into columns. A write
happens when ``flush_events`` messages are buffered or the oldest buffered message is ``flush_seconds`` old.

Exactly once, with the Delta log as the only source of truth (kafka-delta-ingest's design):

* every commit carries, next to its data files, one Delta app transaction per Kafka partition it covers:
  ``txn(appId="<app_id>-<partition>", version=<last offset written>)``. Data and offsets land atomically;
* on start and on every partition assignment the consumer seeks each partition to
  ``DeltaTable.transaction_version("<app_id>-<p>") + 1`` (from the beginning when there is none), never to
  Kafka's committed offsets (which are committed after each write for monitoring only);
* the seek is verified, not trusted: the first message of a partition after every assignment or seek must
  be at the offset sought (the partition's low watermark when the table has none for it). Any other first
  message is refused, the partition re-sought, and nothing of it is buffered until it resumes where the table
  says; a first offset past the one sought is accepted only when a successful re-seek delivers it again,
  which proves that nothing lies between (compaction, transaction markers, or retention, whose deleted range
  is reported exactly);
* before each write the table is reloaded and buffered rows at or below the stored versions are dropped
  (delta-rs does not skip them itself), and the write is committed against exactly that snapshot. A commit
  that races another writer's commit for the same partitions fails in delta-rs's conflict checker
  (``ConcurrentTransaction``); it is then re-checked against the new snapshot and retried, and after
  repeated conflicts the buffers are dropped and the consumer re-seeks from the table.

So a process killed at any point loses nothing committed and, restarted, re-reads exactly what was not.
Several archivers of one job (same topic, same table) share the topic through the consumer group, whose
default name includes the table's Delta id, so that jobs archiving one topic into different tables never
split it between them. Messages that do not decode
are archived too, in the same table: ``event_type`` null, ``decode_error`` set, ``raw`` and the Kafka
columns kept, so that every offset of the topic has exactly one row.

The archiver is the loop that composes the parts, each in its module: the group's callbacks and the buffers
here; where each partition reads from and the check that it resumed where the table says
(:mod:`~hivewire.data._archive_positions`); one Delta commit of the buffers with their offsets
(:mod:`~hivewire.data._archive_commit`); the table itself (:mod:`~hivewire.data._archive_table`).

``deltalake`` and ``pyarrow`` are optional dependencies: ``pip install 'hivewire[delta]'``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.data._archive_commit import Commit, Item, commit
from hivewire.data._archive_positions import Positions, offset_beginning
from hivewire.data._archive_table import open_archive_table, txn_app_id
from hivewire.data._arrow import Message
from hivewire.errors import ConfigError, HivewireError
from hivewire.events._model import Origin
from hivewire.runtime._kafka import KafkaSource

if TYPE_CHECKING:
    import deltalake

log = logging.getLogger("hivewire.archive")

# Conflicting commits retried against a fresh snapshot before the buffers are dropped and re-read.
_MAX_COMMIT_ATTEMPTS = 5


@dataclass
class ArchiveStats:
    """What an :class:`Archiver` did. Times are ``time.monotonic()`` values."""

    messages: int = 0  # consumed
    undecodable: int = 0  # rows written without an event type (decode_error set)
    rows_written: int = 0
    commits: int = 0
    conflicts: int = 0  # commits that lost a race and were re-checked
    skipped: int = 0  # buffered rows found already in the table (another writer had them)
    rebalances: int = 0
    refused: int = 0  # first messages after a seek that were not where the table says (then re-sought)
    first_message_at: float | None = None
    last_commit_at: float | None = None
    versions: dict[int, int] = field(default_factory=dict)  # partition -> last offset this process committed

    def rate(self) -> float:
        """Rows written per second from the first message consumed to the last commit."""
        if self.first_message_at is None or self.last_commit_at is None or self.last_commit_at <= self.first_message_at:
            return 0.0
        return self.rows_written / (self.last_commit_at - self.first_message_at)


@dataclass(frozen=True)
class ArchiveSettings:
    """What ``hivewire archive`` needs (docs/configuration.md, "Archive"): the topic, its consumer settings
    (``apiary.messaging.consumer.*``), the Delta table and the flush bounds; ``flush_seconds`` in seconds."""

    bootstrap_servers: str
    topic: str
    consumer_config: dict[str, str]
    table_uri: str
    app_id: str | None
    group_id: str | None
    flush_events: int
    flush_seconds: float
    storage_options: dict[str, str]
    startup_timeout: float = 60.0

    @classmethod
    def from_config(cls, config: Config) -> ArchiveSettings:
        """Validate and read the archive's keys; raises :class:`~hivewire.errors.ConfigError` naming the key."""
        config.check_keys()
        return cls(
            bootstrap_servers=config.read(keys.BOOTSTRAP_SERVERS),
            topic=config.read(keys.TOPIC),
            consumer_config=config.with_prefix(keys.CONSUMER_PREFIX.name),
            table_uri=config.read(keys.ARCHIVE_TABLE),
            app_id=config.optional(keys.ARCHIVE_APP_ID),
            group_id=config.optional(keys.ARCHIVE_GROUP_ID),
            flush_events=config.read(keys.ARCHIVE_FLUSH_EVENTS),
            flush_seconds=config.read(keys.ARCHIVE_FLUSH_INTERVAL),
            storage_options=config.with_prefix(keys.ARCHIVE_STORAGE_PREFIX.name),
            startup_timeout=config.read(keys.STARTUP_TIMEOUT),
        )


class Archiver:
    """Stream an Apiary topic into the Delta table at ``table_uri``, exactly once.

    ``source`` gives the bootstrap servers, the topic and extra consumer settings (security ...); its
    ``group_id`` is not used, so that an archive never joins a listener's group. ``app_id`` names the job in
    the table's app transactions (default: the topic); every process of one job must use the same one, and
    two jobs writing one table need different ones. ``group_id`` defaults to
    ``hivewire-archive-<app_id>-<table id>``, the table id being the Delta table's own (``metadata().id``):
    the same for every process and restart of one job, whatever spelling of the table URI each uses, and
    different for two jobs that archive one topic into two tables (which would otherwise split the topic's
    partitions between them). ``storage_options`` go to deltalake (object-store credentials).
    """

    def __init__(
        self,
        source: KafkaSource,
        table_uri: str,
        *,
        app_id: str | None = None,
        group_id: str | None = None,
        flush_events: int = 10_000,
        flush_seconds: float = 10.0,
        storage_options: Mapping[str, str] | None = None,
    ) -> None:
        if flush_events < 1:
            raise ConfigError("flush_events", "must be at least 1")
        if flush_seconds <= 0:
            raise ConfigError("flush_seconds", "must be more than 0")
        self.source = source
        self.table_uri = str(table_uri)
        self.app_id = app_id or source.topic
        self._group_id = group_id
        self.flush_events = flush_events
        self.flush_seconds = flush_seconds
        self.storage_options = dict(storage_options) if storage_options else None
        self.stats = ArchiveStats()
        self._consumer: Any = None
        self._table: Any = None
        self._positions = Positions(source.topic, lambda: self._consumer)
        self._buffers: dict[int, list[Item]] = {}
        self._buffered = 0
        self._oldest: float | None = None  # when the oldest buffered message arrived
        self._active = time.monotonic()  # the last message or assignment (for idle_timeout)

    @classmethod
    def from_settings(cls, settings: ArchiveSettings) -> Archiver:
        """An archiver configured by ``settings`` (its :class:`~hivewire.runtime.KafkaSource` included)."""
        return cls(
            KafkaSource(
                settings.bootstrap_servers,
                settings.topic,
                consumer_config=settings.consumer_config,
                startup_timeout=settings.startup_timeout,
            ),
            settings.table_uri,
            app_id=settings.app_id,
            group_id=settings.group_id,
            flush_events=settings.flush_events,
            flush_seconds=settings.flush_seconds,
            storage_options=settings.storage_options or None,
        )

    @classmethod
    def from_config(cls, config: Config) -> Archiver:
        """An archiver configured by the Kafka keys and ``hivewire.archive.*`` (see :class:`ArchiveSettings`)."""
        return cls.from_settings(ArchiveSettings.from_config(config))

    @property
    def group_id(self) -> str:
        """The consumer group: as given, else ``hivewire-archive-<app_id>-<table id>`` (loads or creates the table)."""
        if self._group_id is None:
            self._group_id = f"hivewire-archive-{self.app_id}-{self.table().metadata().id}"
        return self._group_id

    # -- the table ------------------------------------------------------------------------------------
    def table(self) -> deltalake.DeltaTable:
        """The Delta table, created (empty, with the archive schema) if it does not exist, at its latest version."""
        if self._table is not None:
            self._table.update_incremental()
            return self._table
        self._table = open_archive_table(self.table_uri, self.storage_options, self.source.topic)
        return self._table

    def stored_offsets(self, partitions: Iterable[int]) -> dict[int, int]:
        """{partition: last archived offset} of this job's ``partitions``, from the table's app transactions."""
        table = self.table()
        out = {}
        for p in partitions:
            version = table.transaction_version(txn_app_id(self.app_id, p))
            if version is not None:
                out[p] = int(version)
        return out

    # -- the consumer ---------------------------------------------------------------------------------
    def _consumer_config(self) -> dict[str, Any]:
        # librdkafka's outage reports go to the source's reachability: one line per outage, not one per retry.
        config: dict[str, Any] = {**self.source.client_callbacks("archive"), **self.source.consumer_config}
        config.update(
            {
                "bootstrap.servers": self.source.bootstrap_servers,
                "group.id": self.group_id,
                # Positions come from the Delta log, so Kafka's committed offsets are never read or auto-committed.
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "auto.offset.reset": "earliest",
                # An eager protocol: every rebalance revokes everything, so on_assign sees each partition afresh
                # and seeks it from the table.
                "partition.assignment.strategy": "range,roundrobin",
            }
        )
        self.source.group_id = self.group_id  # what the source's refusals (a group ACL) name
        return config

    def _on_assign(self, consumer: Any, partitions: list[Any]) -> None:
        self.source.reachability.up()
        self.stats.rebalances += 1
        table = self.table()
        for tp in partitions:
            tp.offset = self._resume_offset(table, tp.partition)
            self._buffers.setdefault(tp.partition, [])
        log.info(
            "assigned %s: seeking from the table (version %s): %s",
            self.source.topic,
            table.version(),
            {tp.partition: tp.offset for tp in partitions},
        )
        self._positions.assign({tp.partition: tp.offset for tp in partitions})
        consumer.assign(partitions)
        self._active = time.monotonic()

    def _on_revoke(self, consumer: Any, partitions: list[Any]) -> None:
        # Write what we have while the partitions are still ours (nobody else can be assigned them until this
        # callback returns); whatever fails here is simply read again by the next owner.
        try:
            self.flush()
        except Exception:
            log.exception("flush on revoke failed; the next owner re-reads those messages")
        self._drop([tp.partition for tp in partitions])

    def _on_lost(self, consumer: Any, partitions: list[Any]) -> None:
        # Lost (session timeout): another member may own them already, so nothing is written.
        log.warning("lost partitions %s of %s", [tp.partition for tp in partitions], self.source.topic)
        self._drop([tp.partition for tp in partitions])

    def _drop(self, partitions: list[int]) -> None:
        for p in partitions:
            self._buffered -= len(self._buffers.pop(p, []))
        self._positions.drop(partitions)
        if not self._buffered:
            self._oldest = None

    def _take_all(self, batch: list[Any]) -> None:
        """One consume() batch: messages buffered, errors raised or logged."""
        from confluent_kafka import KafkaError, KafkaException

        self._positions.new_batch()
        for msg in batch:
            err = msg.error()
            if err is None:
                self._take(msg)
            elif err.fatal():
                raise HivewireError(f"Kafka: {err.str()}") from KafkaException(err)
            elif err.code() != KafkaError._PARTITION_EOF:
                self.source.report_error(err)  # a refusal (an ACL) stops the run below; others are logged
        self.stats.refused = self._positions.refused
        self.source.raise_if_refused()

    def _take(self, msg: Any) -> None:
        p, offset = msg.partition(), msg.offset()
        if not self._positions.takes(p, offset):
            return
        kind, ts = msg.timestamp()
        # Kept raw: the columnar decoder turns a whole flush into Arrow columns at once.
        self._add(p, Message(Origin(self.source.topic, p, offset, ts if kind else None), msg.value()))

    def _add(self, partition: int, item: Item) -> None:
        """Buffer one message of ``partition`` (in offset order)."""
        self._buffers.setdefault(partition, []).append(item)
        self._buffered += 1
        self.stats.messages += 1
        now = time.monotonic()
        if self._oldest is None:
            self._oldest = now
            log.debug("buffering from %s", item.origin)
        if self.stats.first_message_at is None:
            self.stats.first_message_at = now

    # -- writing --------------------------------------------------------------------------------------
    def flush(self) -> None:
        """Write the buffered messages in one Delta commit with their offsets, skipping what the table has."""
        if not self._buffered:
            return
        for _ in range(_MAX_COMMIT_ATTEMPTS):
            if self._write(self.table()):
                return
        log.warning(
            "%d conflicting commits in a row: dropping %d buffered messages and re-reading them from "
            "the offsets in the table",
            _MAX_COMMIT_ATTEMPTS,
            self._buffered,
        )
        for p in list(self._buffers):
            self._reseek(p)
        self._clear()

    def _write(self, table: Any) -> bool:
        """One attempt to commit the buffers against the snapshot ``table``: False when another writer's commit
        to the same partitions won the race (nothing was written; the caller re-checks a fresh snapshot)."""
        done = commit(table, self._buffers, app_id=self.app_id, topic=self.source.topic)
        self.stats.skipped += done.skipped
        for p, stored in done.behind.items():
            self._positions.seek_past(p, stored)
        if not done.won:
            self.stats.conflicts += 1
            return False
        if done.rows:
            self._committed(done)
        else:
            self._clear()
        return True

    def _committed(self, done: Commit) -> None:
        from confluent_kafka import TopicPartition

        self.stats.commits += 1
        self.stats.rows_written += done.rows
        self.stats.undecodable += done.undecodable
        self.stats.last_commit_at = time.monotonic()
        self.stats.versions.update(done.versions)
        self._clear()
        offsets = [TopicPartition(self.source.topic, p, version + 1) for p, version in done.versions.items()]
        if self._consumer is not None and offsets:
            # For monitoring only (consumer-group lag tools): positions are always taken from the table.
            try:
                self._consumer.commit(offsets=offsets, asynchronous=True)
            except Exception as e:  # e.g. partitions revoked meanwhile; harmless
                log.debug("committing offsets to Kafka: %s", e)

    def _clear(self) -> None:
        for p in self._buffers:
            self._buffers[p] = []
        self._buffered = 0
        self._oldest = None

    def _reseek(self, partition: int) -> None:
        """Read ``partition`` again from where the table says it resumes."""
        if partition in self._positions.assigned:
            self._positions.seek(partition, self._resume_offset(self.table(), partition))

    def _resume_offset(self, table: Any, partition: int) -> int:
        """Where the snapshot ``table`` says ``partition`` resumes: after its stored version, else from its start."""
        version = table.transaction_version(txn_app_id(self.app_id, partition))
        return int(version) + 1 if version is not None else offset_beginning()

    # -- the loop -------------------------------------------------------------------------------------
    def run(self, stop: threading.Event | None = None, *, idle_timeout: float | None = None) -> ArchiveStats:
        """Archive until ``stop`` is set, then flush and leave the group.

        With ``idle_timeout``, also return once partitions are assigned and no message arrived for that long
        (for batch runs, tests and benchmarks).

        A graceful stop writes everything buffered; a crash loses only what was not committed, which the
        next run reads again.
        """
        from confluent_kafka import Consumer

        stop = stop or threading.Event()
        self.table()  # create it now, and fail early on a foreign table
        consumer = Consumer(self._consumer_config())
        self._consumer = consumer
        self._active = time.monotonic()
        self.source.start_clock()
        try:
            consumer.subscribe(
                [self.source.topic], on_assign=self._on_assign, on_revoke=self._on_revoke, on_lost=self._on_lost
            )
            while not stop.is_set():
                wait = 1.0
                if self._oldest is not None:
                    wait = max(0.0, min(wait, self._oldest + self.flush_seconds - time.monotonic()))
                batch = consumer.consume(max(1, min(1000, self.flush_events - self._buffered)), timeout=wait)
                self._take_all(batch)
                now = time.monotonic()
                if batch:
                    self._active = now
                    self.source.reachability.up()
                else:
                    self.source.check_started()
                if self._buffered >= self.flush_events or (
                    self._oldest is not None and now - self._oldest >= self.flush_seconds
                ):
                    self.flush()
                if (
                    idle_timeout is not None
                    and self._positions.assigned
                    and not self._buffered
                    and now - self._active >= idle_timeout
                ):
                    break
            self.flush()
        finally:
            self._consumer = None
            try:
                consumer.close()  # leaves the group (revoking: nothing is left to flush)
            except Exception as e:
                log.debug("closing the consumer: %s", e)
        return self.stats
