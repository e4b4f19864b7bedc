"""The metastore's own event feed as a source: :class:`NotificationLogSource` reads the notification log.

Hive's ``DbNotificationListener`` writes every change to the metastore's ``NOTIFICATION_LOG``; clients read it
with ``get_next_notification``. This source polls it through a :class:`~hivewire.metastore.MetastoreClient`
(failover and ZooKeeper discovery included), turns each entry into an event (:mod:`hivewire.events._notification`)
carried as an Apiary-style record whose offset is the entry's event id, and keeps its position (the last event
id every listener has handled or dead-lettered) durably: in a file by default, or any :class:`PositionStore`.
A crash re-delivers what was not committed and never skips.

The server never reports events it cleaned up before they were read. The source compares each event id with
the one it expects and reports a hole as a gap: a log line, the ``hivewire_notification_events_missing``
metric, and a :class:`~hivewire.NotificationLogEvent` whose ``hive_event_type`` is :data:`EVENTS_MISSING`
(for listeners that ask with ``@app.on_notification_log``); then it goes on or stops, as
``hivewire.notification.on.gap`` says.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from prometheus_client import Counter

from hivewire._ratelimit import RateLimit
from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.errors import ConfigError, DecodeError, HivewireError, MetastoreError, SourceError
from hivewire.events import _apiary as apiary
from hivewire.events._notification import from_notification, names_of
from hivewire.metastore import MetastoreClient
from hivewire.metastore._resolver import UriResolver
from hivewire.runtime._metrics import Metrics
from hivewire.runtime._source import Assigned, Delivered, MemoryRecord, Reader, Record, TopicPartition
from hivewire_thrift.hive_metastore.ttypes import NotificationEvent, NotificationEventRequest

__all__ = [
    "EVENTS_MISSING",
    "FilePosition",
    "NotificationLogSettings",
    "NotificationLogSource",
    "PositionStore",
    "notification_record",
]

log = logging.getLogger("hivewire.notification")

#: ``hive_event_type`` of the event that reports events removed from the log before they were read.
EVENTS_MISSING = "HIVEWIRE_EVENTS_MISSING"
#: The source's one "topic" and partition (records' offsets are event ids).
TOPIC = "notification-log"
_TP: TopicPartition = (TOPIC, 0)


@dataclass(frozen=True)
class NotificationLogSettings:
    """The source's keys (docs/configuration.md, "Notification log"); times in seconds."""

    position_file: str
    start: str
    batch_size: int
    poll_interval: float
    on_gap: str

    @classmethod
    def from_config(cls, config: Config) -> NotificationLogSettings:
        return cls(
            position_file=config.read(keys.NOTIFICATION_POSITION_FILE),
            start=config.read(keys.NOTIFICATION_START),
            batch_size=config.read(keys.NOTIFICATION_BATCH_SIZE),
            poll_interval=config.read(keys.NOTIFICATION_POLL_INTERVAL),
            on_gap=config.read(keys.NOTIFICATION_ON_GAP),
        )


class PositionStore(Protocol):
    """Where a reader keeps the last event id handled (a file by default; any durable store will do)."""

    def load(self) -> int | None:
        """The id saved last, or None when nothing was saved yet."""

    def save(self, event_id: int) -> None:
        """Keep ``event_id`` durably before returning."""


class FilePosition:
    """A position in a small text file, replaced atomically and fsync'ed on every save."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def load(self) -> int | None:
        try:
            text = self.path.read_text(encoding="ascii").strip()
        except FileNotFoundError:
            return None
        try:
            return int(text)
        except ValueError:
            raise SourceError(
                f"the notification-log position file {self.path} holds {text[:40]!r}, not an event id: "
                "fix or remove it (removing it starts again as hivewire.notification.start says)"
            ) from None

    def save(self, event_id: int) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w", encoding="ascii") as f:
            f.write(f"{event_id}\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        dir_fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def notification_record(entry: NotificationEvent) -> MemoryRecord:
    """The record of one log entry: its event as an Apiary-style message (or, when it does not decode, the
    entry itself as JSON, which the runtime then dead-letters with the reason), at offset ``eventId``."""
    try:
        value = apiary.encode(from_notification(entry))
    except (DecodeError, ValueError) as e:
        log.warning("notification %s (%s) does not decode: %s", entry.eventId, entry.eventType, e)
        value = json.dumps({"notification": _entry_dict(entry), "error": str(e)}).encode("utf-8")
    return MemoryRecord(value, TOPIC, 0, entry.eventId, entry.eventTime * 1000)


def _entry_dict(entry: NotificationEvent) -> dict[str, object]:
    names = ("eventId", "eventTime", "eventType", "dbName", "tableName", "message", "messageFormat", "catName")
    return {name: getattr(entry, name) for name in names}


@dataclass(frozen=True)
class Filter:
    """Which entries a reader wants: a database, tables of it, and event types to skip (names as the log stores
    them). Hive 4 applies it on the server (``NotificationEventRequest`` fields 3-6); older metastores ignore
    those fields, so :meth:`wants` applies it again on every entry."""

    db: str | None = None
    tables: frozenset[str] = frozenset()
    skip_types: frozenset[str] = frozenset()

    @property
    def empty(self) -> bool:
        return self.db is None and not self.tables and not self.skip_types

    def request(self, after: int, limit: int) -> NotificationEventRequest:
        return NotificationEventRequest(
            lastEvent=after,
            maxEvents=limit,
            eventTypeSkipList=sorted(self.skip_types) or None,
            dbName=self.db,
            tableNames=sorted(self.tables) or None,
        )

    def wants(self, entry: NotificationEvent) -> bool:
        if entry.eventType in self.skip_types:
            return False
        db, table = names_of(entry)
        if self.db is not None and (db or "").lower() != self.db:
            return False
        return not self.tables or (table or "").lower() in self.tables


_EVERYTHING = Filter()


def fetch(client: MetastoreClient, after: int, limit: int, wanted: Filter = _EVERYTHING) -> list[NotificationEvent]:
    """Up to ``limit`` log entries after event id ``after``, in id order (Hive 2.3 answers None on a failed commit)."""
    response = client.call("get_next_notification", wanted.request(after, limit))
    events = getattr(response, "events", None) or []
    return [e for e in events if isinstance(e, NotificationEvent)]


def _gap_entry(first: int, last: int, reason: str) -> NotificationEvent:
    message = json.dumps({"firstEventId": first, "lastEventId": last, "reason": reason})
    return NotificationEvent(first, int(time.time()), EVENTS_MISSING, None, None, message, "json-0.2")


class NotificationLogSource:
    """Events from the metastore's notification log, for ``app.run(source)``.

    ``metastore`` is a :class:`~hivewire.metastore.MetastoreClient` or its URIs (``thrift://h:9083``). The
    position is kept in ``position`` (a :class:`PositionStore`, or a file path; by default
    ``hivewire.notification.position.file``). ``config`` gives the other settings (start, batch size, poll
    interval, what to do on a gap); keyword arguments override them. ``db``, ``tables`` and ``skip_types``
    (type names as the log stores them) select entries: on the server where it can (Hive 4), here otherwise.
    With ``stop_at_end=True`` the app's ``run`` returns once everything written so far was handled and
    committed. Dead letters (events every attempt failed on) are appended to ``dead_letter_file`` as JSON lines
    (default: the position file's name plus ``.dead-letters.jsonl``).
    """

    def __init__(
        self,
        metastore: MetastoreClient | str | Sequence[str],
        *,
        position: PositionStore | str | os.PathLike[str] | None = None,
        config: Config | None = None,
        start: str | None = None,
        batch_size: int | None = None,
        poll_interval: float | None = None,
        on_gap: str | None = None,
        dead_letter_file: str | os.PathLike[str] | None = None,
        stop_at_end: bool = False,
        db: str | None = None,
        tables: Sequence[str] = (),
        skip_types: Sequence[str] = (),
    ) -> None:
        settings = NotificationLogSettings.from_config(config or Config.load())
        self.filter = Filter(db.lower() if db else None, frozenset(t.lower() for t in tables), frozenset(skip_types))
        self._client = metastore if isinstance(metastore, MetastoreClient) else MetastoreClient(metastore)
        self._resolver: UriResolver = self._client._resolver
        if position is None or isinstance(position, (str, os.PathLike)):
            path = Path(position if position is not None else settings.position_file)
            self.position: PositionStore = FilePosition(path)
            default_dead = path.with_name(path.name + ".dead-letters.jsonl")
        else:
            self.position = position
            default_dead = Path("hivewire-notification.dead-letters.jsonl")
        self.start = start or settings.start
        self.batch_size = batch_size or settings.batch_size
        self.poll_interval = poll_interval if poll_interval is not None else settings.poll_interval
        self.on_gap = on_gap or settings.on_gap
        if self.start not in ("earliest", "latest"):
            raise ConfigError(keys.NOTIFICATION_START.name, f"{self.start!r} is not 'earliest' or 'latest'")
        if self.on_gap not in ("continue", "stop"):
            raise ConfigError(keys.NOTIFICATION_ON_GAP.name, f"{self.on_gap!r} is not 'continue' or 'stop'")
        self.stop_at_end = stop_at_end
        self.topic = TOPIC
        self.dead_letter_file = Path(dead_letter_file) if dead_letter_file is not None else default_dead
        self.dead_letter_topic = str(self.dead_letter_file)
        self.gaps: list[tuple[int, int]] = []  # (first, last) missing ids reported so far
        self._next = 1  # the next event id expected
        self._saved = 0  # the last id saved as handled
        self._checked = False  # whether a hole before the next id means events were missed
        self._last_record = 0  # the id of the last entry delivered as a record (later ones were filtered out)
        self._at_end = False
        self._latest = 0  # the log's current id, as last seen
        self._paused = False
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._missing_metric: Counter | None = None
        self._unreachable = RateLimit(60)

    # -- Source ---------------------------------------------------------------------------------------
    def attach_metrics(self, metrics: Metrics) -> None:
        self._missing_metric = Counter(
            "hivewire_notification_events_missing",
            "Event ids removed from the notification log before this reader handled them.",
            registry=metrics.registry,
        )

    def open(self, on_assign: Assigned, on_revoke: Assigned) -> None:
        saved = self.position.load()
        if saved is not None:
            self._saved, self._checked = saved, True
        elif self.start == "latest":
            saved = self._current_id()
            self.position.save(saved)  # so that a crash before the first commit does not skip what follows
            self._saved, self._checked = saved, True
        else:
            self._saved = 0  # from the oldest event the log keeps: nothing before it was promised
        self._next = self._saved + 1
        log.info("reading the notification log of %s after event %d", self._client.uri or "the metastore", self._saved)
        on_assign([_TP])

    def poll(self, max_records: int, timeout: float) -> Sequence[Record]:
        if self._paused or self._closed.is_set():
            self._closed.wait(min(timeout, 0.1))
            return []
        try:
            entries = fetch(self._client, self._next - 1, min(max_records, self.batch_size), self.filter)
            gaps = self._past_filtered_tail() if not entries and not self.filter.empty else []
        except MetastoreError as e:  # the client already failed over and reconnected; ask again later
            count = self._unreachable.due()
            if count:
                log.warning(
                    "cannot read the notification log (%d time(s) since the last warning): %s; retrying; check "
                    "metastore.thrift.uris (--metastore-uris) and that the metastore runs",
                    count,
                    e,
                )
            self._closed.wait(min(timeout, self.poll_interval))
            return []
        if not entries:
            self._latest = max(self._latest, self._next - 1)
            self._at_end = not gaps
            if not gaps:
                self._closed.wait(min(timeout, self.poll_interval))
            return gaps
        self._at_end = False
        records: list[Record] = []
        for entry in entries:
            if entry.eventId < self._next:  # Hive 4 warns of repeated ids; a record per id is enough
                continue
            if entry.eventId > self._next and self._checked:
                gap = self._missing(self._next, entry.eventId - 1)
                if gap is not None:
                    records.append(self._report_gap(*gap))
            if self.filter.wants(entry):
                records.append(notification_record(entry))
            with self._lock:
                if records:
                    self._last_record = records[-1].offset() or 0
                self._next = entry.eventId + 1
            self._checked = True
        self._latest = max(self._latest, self._next - 1)
        return records

    def _past_filtered_tail(self) -> list[Record]:
        """Hive 4 filters on the server: what it filtered out after the last entry it sent never comes back. When
        a filtered read finds nothing, the reader moves past the log's current id (reporting a hole before it,
        as :meth:`poll` does), and its position follows once everything before was handled."""
        current = self._current_id()  # read first: every entry up to it is committed when the read below runs
        if current < self._next or fetch(self._client, self._next - 1, 1, self.filter):
            return []  # nothing new, or a wanted entry arrived meanwhile: the next poll reads it
        gap = self._missing(self._next, current) if self._checked else None
        records: list[Record] = [] if gap is None else [self._report_gap(*gap)]
        with self._lock:
            if records:
                self._last_record = records[-1].offset() or 0
            self._next = current + 1
        self._checked = True
        return records

    def _missing(self, first: int, last: int) -> tuple[int, int] | None:
        """The ids of ``first..last`` that are gone from the log. Without a filter, all of them; with one, the
        server may have filtered them out, so the log is asked, unfiltered, where it starts after ``first - 1``."""
        if self.filter.empty:
            return first, last
        following = fetch(self._client, first - 1, 1)
        if following and following[0].eventId > first:
            return first, min(last, following[0].eventId - 1)
        return None

    def _report_gap(self, first: int, last: int) -> MemoryRecord:
        self.gaps.append((first, last))
        count = last - first + 1
        reason = (
            f"{count} event(s) {first}..{last} are no longer in the notification log: they were cleaned up "
            "before this reader handled them (raise hive.metastore.event.db.listener.timetolive, or read faster)"
        )
        log.error("notification log gap: %s", reason)
        if self._missing_metric is not None:
            self._missing_metric.inc(count)
        if self.on_gap == "stop":
            raise SourceError(f"stopping ({keys.NOTIFICATION_ON_GAP.name}=stop): {reason}")
        return notification_record(_gap_entry(first, last, reason))

    def _current_id(self) -> int:
        current = self._client.call("get_current_notificationEventId")
        return int(getattr(current, "eventId", 0) or 0)

    def commit(self, offsets: Mapping[TopicPartition, int], *, wait: bool) -> None:
        offset = offsets.get(_TP)
        if offset is None:
            return
        with self._lock:
            done = offset - 1
            if done >= self._last_record:  # what was read after the last record was filtered out
                done = max(done, self._next - 1)
            if done > self._saved:
                self.position.save(done)
                self._saved = done

    def next_offset(self, tp: TopicPartition) -> int | None:
        """The next event id to read (the log's one partition)."""
        with self._lock:
            return self._next if tp == _TP else None

    def pause(self) -> None:
        self._paused = True

    def resume(self) -> None:
        self._paused = False

    def dead_letter(self, record: Record, headers: Mapping[str, str], on_delivered: Delivered) -> None:
        value = record.value() or b""
        line = {"eventId": record.offset(), "headers": dict(headers), "value": value.decode("utf-8", "replace")}
        with self._lock:
            self.dead_letter_file.parent.mkdir(parents=True, exist_ok=True)
            with open(self.dead_letter_file, "a", encoding="utf-8") as f:
                f.write(json.dumps(line) + "\n")
                f.flush()
                os.fsync(f.fileno())
        on_delivered()

    def lag(self) -> dict[TopicPartition, int]:
        return {_TP: max(0, self._latest - (self._next - 1))}

    def finished(self) -> bool:
        """With ``stop_at_end``: everything the log held at the last poll was handled and committed."""
        if not (self.stop_at_end and self._at_end):
            return False
        with self._lock:
            if self._saved >= self._last_record and self._saved < self._next - 1:  # a filtered-out tail
                self.position.save(self._next - 1)
                self._saved = self._next - 1
            return self._saved >= self._next - 1

    def drain(self, timeout: float) -> None:
        """Dead letters are stored before :meth:`dead_letter` returns; nothing to wait for."""

    def reader(self) -> Reader:
        return _LogReader(MetastoreClient(self._resolver, timeout=self._client.timeout))

    def close(self) -> None:
        self._closed.set()
        self._client.close()


class _LogReader:
    """Reads a range of event ids again, on its own connection (one worker thread at a time)."""

    def __init__(self, client: MetastoreClient) -> None:
        self._client = client

    def read(self, tp: TopicPartition, start: int, end: int, timeout: float) -> Sequence[Record]:
        try:
            entries = fetch(self._client, start - 1, max(1, end - start))
        except HivewireError as e:
            raise SourceError(f"cannot read notification events {start}..{end - 1} again: {e}") from e
        return [notification_record(e) for e in entries if start <= e.eventId < end]

    def close(self) -> None:
        self._client.close()
