"""Notebook helpers: :func:`read_events` reads a bounded slice of an Apiary topic into an :class:`EventList`.

``read_events`` assigns the partitions itself (no consumer group, nothing committed, no effect on any running
listener), reads from a start to an end position fixed when it is called, shows a tqdm progress bar, and
returns the events with ``to_arrow()``, ``to_pandas()``, ``to_spark(spark)`` and an HTML summary. Messages that
do not decode are kept apart in ``EventList.failures`` instead of raising. Offsets the read asked for that the
broker had deleted (an explicit start below the partition's first retained offset, or records deleted while
reading) are never skipped silently: each exact range is in ``EventList.missing`` and one WARNING line names them.

Needs pyarrow (``pip install 'hivewire[arrow]'``) for the table conversions, and pandas for ``to_pandas()``.
"""

from __future__ import annotations

import html
import importlib
import importlib.util
import logging
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, SupportsIndex

from hivewire.config._kafka import KafkaValue
from hivewire.data._arrow import SCHEMA, to_arrow
from hivewire.data._columnar import BATCH_ROWS
from hivewire.data._decoder import decode_messages
from hivewire.data._offsets import MissingRange, TimeBound, _Reader, report_missing, to_millis
from hivewire.data._rows import NO_VALUE, Message, Undecodable, event_row, paused_gc
from hivewire.data._svg import timeline_svg, utc_text
from hivewire.errors import ConfigError, DecodeError, HivewireError, PrerequisiteError, SourceError
from hivewire.events import _apiary as apiary
from hivewire.events._model import ListenerEvent, Origin
from hivewire.runtime._deleted import deleted_range
from hivewire.runtime._kafka import KafkaSource

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from hivewire.data._iceberg_commits import IcebergCommits

log = logging.getLogger("hivewire.notebook")

#: How many events ``EventList._repr_html_`` shows.
HTML_ROWS = 20
#: Rows per record batch of a table made from messages.
_BATCH_ROWS = BATCH_ROWS


class EventList(list[ListenerEvent]):
    """A list of events read from Kafka, with the messages that did not decode in :attr:`failures` and the
    offsets the broker had deleted before they could be read in :attr:`missing`.

    ``to_arrow()``, ``to_pandas()`` and ``to_spark(spark)`` convert the events (the schema of
    :mod:`hivewire.arrow`); ``include_failures=True`` adds a row per undecodable message.

    The list :func:`read_events` returns holds the raw messages until the events are first used as a list
    (indexed, iterated, counted, compared, changed): then every message is decoded, once. Converting it
    to a table before that decodes the messages straight into columns (the columnar decoder), so
    ``read_events(...).to_arrow()`` never makes an event and holds little more than the messages and the
    table.
    """

    def __init__(
        self,
        events: Iterable[ListenerEvent] = (),
        failures: Iterable[Undecodable] = (),
        *,
        messages: list[Message] | None = None,
        missing: Iterable[MissingRange] = (),
    ) -> None:
        super().__init__(events)
        self._failures = list(failures)
        #: The ranges of offsets the read asked for that the broker had already deleted (retention,
        #: ``delete_records``): exact, one per partition and gap, in partition order. Empty when nothing was lost.
        self.missing: list[MissingRange] = list(missing)
        # Messages not decoded yet, in the list's order (time, partition, offset), events and failures mixed.
        self._messages = messages or None

    @property
    def failures(self) -> list[Undecodable]:
        """The messages that did not decode (where they came from, their bytes and why)."""
        self._decode()
        return self._failures

    @failures.setter
    def failures(self, value: list[Undecodable]) -> None:
        self._decode()
        self._failures = value

    def _decode(self) -> None:
        """Decode the messages still held raw, once, into the list and its failures."""
        messages, self._messages = self._messages, None
        if not messages:
            return
        decode = apiary.decode
        events: list[ListenerEvent] = []
        with paused_gc():
            for origin, value in messages:
                if value is None:
                    self._failures.append(Undecodable(origin, None, NO_VALUE))
                    continue
                try:
                    events.append(decode(value, origin=origin))
                except DecodeError as e:
                    self._failures.append(Undecodable(origin, value, e.reason))
        list.extend(self, events)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as each event's Apiary message and origin, decoded again when loaded: an event's Thrift
        objects are converted on first use by closures, which do not pickle (issue 33)."""
        messages = [(e.raw if e.raw is not None else apiary.encode(e), e.origin) for e in self]
        return (_unpickle, (messages, self.failures, self.missing))

    def _rows(self, include_failures: bool) -> list[ListenerEvent | Undecodable]:
        if not include_failures or not self.failures:
            return list(self)
        return sorted([*self, *self.failures], key=_order)

    def to_arrow(self, *, include_failures: bool = False, on_error: Literal["raise", "record"] = "record") -> pa.Table:
        """A ``pyarrow.Table`` (:data:`hivewire.arrow.SCHEMA`). An object that fails to convert is recorded in
        ``decode_error`` (``on_error="record"``, the default here: a notebook should show, not stop)."""
        if self._messages is not None:
            return self._messages_to_arrow(self._messages, include_failures, on_error)
        return to_arrow(self._rows(include_failures), on_error=on_error)

    @staticmethod
    def _messages_to_arrow(
        messages: list[Message], include_failures: bool, on_error: Literal["raise", "record"]
    ) -> pa.Table:
        """The table of the messages not decoded yet, as :meth:`to_arrow` of their events and failures."""
        import pyarrow as pa
        import pyarrow.compute as pc

        batches = []
        with paused_gc():
            for start in range(0, len(messages), _BATCH_ROWS):
                chunk = messages[start : start + _BATCH_ROWS]
                made = decode_messages(chunk, "record")
                failed = made.column("event_type").is_null()
                if on_error == "raise":
                    broken = pc.and_(pc.invert(failed), made.column("decode_error").is_valid())
                    if pc.any(broken).as_py():
                        first = chunk[pc.index(broken, True).as_py()]
                        event_row(apiary.decode(first.value or b"", origin=first.origin), "raise")  # raises
                if not include_failures and pc.any(failed).as_py():
                    made = made.filter(pc.invert(failed))
                batches.append(made)
        return pa.Table.from_batches(batches, schema=SCHEMA)

    def to_pandas(self, *, include_failures: bool = False) -> pd.DataFrame:
        """A pandas DataFrame of :meth:`to_arrow`; map columns become dicts. Needs pandas."""
        try:
            importlib.import_module("pandas")
        except ImportError as e:
            # Checked first: pyarrow's own error says only "No module named 'pandas'", after converting.
            raise PrerequisiteError(
                "EventList.to_pandas needs pandas, which is not installed: "
                "pip install 'hivewire[arrow]' (or pip install pandas); to_arrow() works "
                "without it"
            ) from e
        return self.to_arrow(include_failures=include_failures).to_pandas(maps_as_pydicts="strict")

    def to_spark(self, spark: SparkSession, *, include_failures: bool = False, raw: bool = True) -> DataFrame:
        """A Spark DataFrame (:func:`hivewire.spark.to_dataframe`) of the events."""
        from hivewire.data._spark import to_dataframe

        return to_dataframe(spark, self.to_arrow(include_failures=include_failures), raw=raw)

    def iceberg_commits(self, io_properties: Mapping[str, str] | None = None) -> IcebergCommits:
        """The Iceberg commits among the events, one row per snapshot (:mod:`hivewire.data._iceberg_commits`)."""
        from hivewire.data._iceberg_commits import IcebergCommits

        return IcebergCommits(self, io_properties)

    def counts(self) -> dict[str, int]:
        """Events per type, most frequent first."""
        return dict(Counter(e.event_type.value for e in self).most_common())

    def __getitem__(self, index: Any) -> Any:
        # A slice stays an EventList (without failures), so notebooks can chain events[:100].to_arrow().
        self._decode()
        got = super().__getitem__(index)
        return EventList(got) if isinstance(index, slice) else got

    def __repr__(self) -> str:
        # The list's own repr prints every event: unreadable for thousands of them.
        counts = ", ".join(f"{k}={v}" for k, v in self.counts().items())
        return f"EventList({len(self)} events{': ' + counts if counts else ''}; {len(self.failures)} undecodable)"

    def _repr_html_(self) -> str:
        esc = html.escape
        counts = "".join(
            f"<tr><td>{esc(k)}</td><td style='text-align:right'>{v:,}</td></tr>" for k, v in self.counts().items()
        )
        rows = []
        self._decode()
        for event in list.__getitem__(self, slice(0, HTML_ROWS)):
            origin = event.origin
            when = utc_text(origin.timestamp) if origin is not None and origin.timestamp is not None else ""
            rows.append(
                "<tr>"
                + "".join(
                    f"<td>{esc(str(v))}</td>"
                    for v in (
                        when,
                        event.event_type.value,
                        event.qualified_name,
                        "" if event.status else "failed",
                        origin or "",
                    )
                )
                + "</tr>"
            )
        more = f"<p>... and {len(self) - HTML_ROWS:,} more</p>" if len(self) > HTML_ROWS else ""
        failures = (
            f"<p>{len(self.failures):,} message(s) did not decode: see <code>.failures</code></p>"
            if self.failures
            else ""
        )
        return (
            f"<div class='hivewire-events'><p><b>{len(self):,} events</b></p>"
            f"{timeline_svg(self)}"
            f"<table><tr><th>type</th><th>events</th></tr>{counts}</table>"
            "<table><tr><th>time (UTC)</th><th>type</th><th>object</th><th>status</th><th>origin</th></tr>"
            f"{''.join(rows)}</table>{more}{failures}</div>"
        )


def _decoding(name: str) -> Any:
    """``list.<name>``, decoding the list's raw messages (and those of an EventList argument) first."""
    method = getattr(list, name)

    def decoded(self: EventList, *args: Any, **kwargs: Any) -> Any:
        self._decode()
        for arg in args:
            if isinstance(arg, EventList):
                arg._decode()
        return method(self, *args, **kwargs)

    decoded.__name__ = decoded.__qualname__ = name
    decoded.__doc__ = method.__doc__
    return decoded


# Every other way of using the list as a list decodes it first (__getitem__ and the HTML do it themselves).
for _name in (
    "__len__",
    "__iter__",
    "__reversed__",
    "__contains__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__add__",
    "__iadd__",
    "__mul__",
    "__rmul__",
    "__imul__",
    "__setitem__",
    "__delitem__",
    "append",
    "extend",
    "insert",
    "pop",
    "remove",
    "index",
    "count",
    "sort",
    "reverse",
    "clear",
    "copy",
):
    setattr(EventList, _name, _decoding(_name))


def progress_bar() -> Any:
    """tqdm's notebook bar when ipywidgets is installed, else its text bar: ``tqdm.auto`` without ipywidgets
    warns (a red TqdmWarning in Jupyter) on every call."""
    if importlib.util.find_spec("ipywidgets") is not None:
        from tqdm.auto import tqdm

        return tqdm
    from tqdm.std import tqdm as text_tqdm

    return text_tqdm


def _unpickle(
    messages: list[tuple[bytes, Origin | None]], failures: list[Undecodable], missing: Iterable[MissingRange] = ()
) -> EventList:
    return EventList((apiary.decode(raw, origin=origin) for raw, origin in messages), failures, missing=missing)


def _order(item: ListenerEvent | Undecodable | Message) -> tuple[int, int, int]:
    """Time order (messages without a timestamp first), then partition and offset."""
    origin = item.origin
    if origin is None:
        return (-1, -1, -1)
    return (origin.timestamp if origin.timestamp is not None else -1, origin.partition, origin.offset)


def read_events(
    source: KafkaSource | None = None,
    *,
    bootstrap_servers: str | None = None,
    topic: str | None = None,
    since: TimeBound | None = None,
    until: TimeBound | None = None,
    start_offsets: Mapping[int, int] | None = None,
    end_offsets: Mapping[int, int] | None = None,
    partitions: Iterable[SupportsIndex] | None = None,
    max_events: int | None = None,
    progress: bool = True,
    timeout: float = 30.0,
    consumer_config: Mapping[str, KafkaValue] | None = None,
) -> EventList:
    """Read a bounded slice of an Apiary topic: the events, in time order, and the messages that did not decode.

    The topic is ``source`` (a :class:`~hivewire.runtime.KafkaSource`; its ``consumer_config`` applies, its group
    does not) or ``bootstrap_servers`` and ``topic``. Every partition is read (or those in ``partitions``, or
    the keys of ``start_offsets``/``end_offsets`` when given), each from its start to its end, both fixed now:

    * start: ``start_offsets[p]``, else the first offset at or after ``since``, else the earliest offset;
    * end (exclusive): ``end_offsets[p]``, else the first offset at or after ``until``, else the end of the
      partition as it is now (messages produced while reading are not included).

    With ``since``/``until``, only messages with ``since <= timestamp < until`` are returned (times: datetime,
    naive = UTC; date; ISO string; timedelta before now; or epoch milliseconds). ``max_events`` stops after
    that many messages, taken in the order the partitions deliver them. No consumer group is joined and no
    offset is committed. ``timeout`` bounds each broker request and any wait for an expected message.

    Offsets asked for that the broker no longer holds (a ``start_offsets`` entry below the partition's first
    retained offset, or records retention deleted during the read) are listed exactly in the result's
    ``missing`` and named in one WARNING line on the ``hivewire.notebook`` logger; what remains is returned.

    Raises :class:`~hivewire.errors.SourceError` (one message saying what to check) when Kafka cannot be reached
    or the read fails; librdkafka's own log lines go to the ``hivewire.kafka.librdkafka`` logger at DEBUG.
    """
    from confluent_kafka import Consumer, KafkaError, KafkaException

    tqdm = progress_bar()

    if source is not None:
        if bootstrap_servers is not None or topic is not None:
            raise ConfigError("source", "give a KafkaSource or bootstrap_servers and topic, not both")
        bootstrap_servers, topic = source.bootstrap_servers, source.topic
        config = dict(source.consumer_config)
    elif bootstrap_servers is None or topic is None:
        raise ConfigError("source", "give a KafkaSource, or bootstrap_servers= and topic=")
    else:
        config = {}
    config.update(consumer_config or {})
    if max_events is not None and max_events < 0:
        raise ConfigError("max_events", "must be 0 or more")
    since_ms = None if since is None else to_millis(since)
    until_ms = None if until is None else to_millis(until)
    config.update(
        {
            "bootstrap.servers": bootstrap_servers,
            # confluent-kafka insists on a group id even for assign(); this one never joins: no subscribe(), no
            # commits, no stored offsets.
            "group.id": config.get("group.id", "hivewire-read-events"),
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "enable.partition.eof": True,
            "auto.offset.reset": "earliest",
        }
    )
    # librdkafka retries unreachable brokers on its own and would log every attempt: the last error is kept
    # for the one message a failed read raises.
    errors: list[str] = []

    def client_error(err: KafkaError) -> None:
        errors[:] = [err.str()]

    quiet = _QuietLog(logging.getLogger("hivewire.kafka.librdkafka.read_events"))
    consumer = Consumer({"error_cb": client_error, "logger": quiet, **config})
    try:
        reader = _Reader(consumer, topic, timeout)
        if partitions is not None:
            wanted = sorted({int(p) for p in partitions})
        elif start_offsets or end_offsets:
            wanted = sorted({*(start_offsets or {}), *(end_offsets or {})})
        else:
            wanted = reader.partitions()
        ranges: dict[int, tuple[int, int]] = {}
        missing: list[MissingRange] = []
        for p in wanted:
            low, high = reader.watermarks(p)
            if start_offsets and p in start_offsets:
                start = max(low, start_offsets[p])
                asked_end = end_offsets[p] if end_offsets and p in end_offsets else high
                if start_offsets[p] < min(low, asked_end):
                    missing.append(MissingRange(topic, p, start_offsets[p], min(low, asked_end) - 1))
            elif since_ms is not None:
                start = reader.offset_for_time(p, since_ms, low, high)
            else:
                start = low
            if end_offsets and p in end_offsets:
                end = min(high, end_offsets[p])
            elif until_ms is not None:
                end = reader.offset_for_time(p, until_ms, max(low, start), high)
            else:
                end = high
            if start < end:
                ranges[p] = (start, end)
        total = sum(end - start for start, end in ranges.values())
        limit = total if max_events is None else min(total, max_events)
        log.debug("reading %s: %s (%d messages)", topic, ranges, total)
        messages: list[Message] = []
        # The bar counts messages read; with max_events, the messages kept.
        with (
            tqdm(total=total if max_events is None else limit, unit="msg", desc=topic, disable=not progress) as bar,
            paused_gc(),
        ):
            if limit:
                _consume(consumer, reader, ranges, limit, since_ms, until_ms, messages, missing, bar)
        messages.sort(key=_order)
        missing.sort(key=lambda m: (m.partition, m.first))
        report_missing(missing, f"read_events({topic!r})")
        return EventList(messages=messages, missing=missing)
    except (KafkaException, HivewireError) as e:
        if isinstance(e, HivewireError) and not errors:
            raise  # not about reaching Kafka: its own message says what went wrong
        if not errors:
            try:
                consumer.poll(0.1)  # serves librdkafka's error callback: the connection's own reason
            except KafkaException:
                pass
        reason = errors[-1] if errors else (_reason(e) if isinstance(e, KafkaException) else str(e))
        raise SourceError(
            f"could not read {topic!r} from Kafka at {bootstrap_servers}: {reason}; check bootstrap_servers, "
            "that the brokers run and this machine reaches them, the security settings (consumer_config: "
            f"security.protocol, sasl.*, ssl.*), that the topic exists, or raise timeout= (now {timeout:g} s)"
        ) from None
    finally:
        consumer.close()


class _QuietLog:
    """librdkafka's ``logger`` for a bounded read: every line at DEBUG (a failed read raises one error)."""

    def __init__(self, logger: logging.Logger) -> None:
        self._logger = logger

    def log(self, _level: int, fmt: str, *args: object) -> None:
        self._logger.debug(fmt, *args)


def _reason(error: Exception) -> str:
    from confluent_kafka import KafkaError

    first = error.args[0] if error.args else None
    return str(first.str()) if isinstance(first, KafkaError) else str(error)


def _consume(
    consumer: Any,
    reader: _Reader,
    ranges: dict[int, tuple[int, int]],
    limit: int,
    since_ms: int | None,
    until_ms: int | None,
    messages: list[Message],
    missing: list[MissingRange],
    bar: Any,
) -> None:
    """Consume ``ranges`` ({partition: (start, end)}) until each partition reaches its end or ``limit`` is read.

    A partition whose first message lies past its start, or that ends before giving one, is checked against
    the broker's first retained offset: records deleted since the range was planned go to ``missing``.
    """
    from confluent_kafka import KafkaError, TopicPartition

    topic, timeout = reader.topic, reader.timeout
    unchecked = set(ranges)  # partitions that have given no message yet

    def check(p: int, resumed: int) -> None:
        """The first message of ``p`` is at ``resumed`` (its end when none came): was anything deleted?"""
        unchecked.discard(p)
        start, end = ranges[p]
        deleted = deleted_range(start, resumed, lambda: reader.watermarks(p)[0], end)
        if deleted is not None:
            missing.append(MissingRange(topic, p, *deleted))

    consumer.assign([TopicPartition(topic, p, start) for p, (start, _) in ranges.items()])
    pending = set(ranges)
    seen = shown = 0
    counts_read = limit == sum(end - start for start, end in ranges.values())
    last_progress = time.monotonic()
    while pending and seen < limit:
        batch = consumer.consume(1000, timeout=1.0)
        if not batch:
            if time.monotonic() - last_progress > timeout:
                positions = {p: ranges[p] for p in pending}
                raise HivewireError(f"{topic}: no message for {timeout} s; still expected offsets {positions}")
            continue
        last_progress = time.monotonic()
        read = 0
        for msg in batch:
            p = msg.partition()
            err = msg.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    # At the end of the partition: the last offsets before it held no message (a transaction
                    # marker, compaction), or the end moved back (retention). Nothing more comes.
                    if p in unchecked and p in pending:
                        check(p, ranges[p][1])
                    pending.discard(p)
                    continue
                if not err.retriable():
                    raise HivewireError(f"{topic}/{p}: {err.str()}")
                log.warning("%s/%s: %s (retrying)", topic, p, err.str())
                continue
            if p not in pending:
                continue
            offset = msg.offset()
            start, end = ranges[p]
            if offset < start:
                continue  # fetched for an earlier assignment (a time-search probe)
            if p in unchecked:
                check(p, offset)
            if offset >= end:
                pending.discard(p)
                consumer.pause([TopicPartition(topic, p)])
                continue
            if offset == end - 1:
                pending.discard(p)
                consumer.pause([TopicPartition(topic, p)])
            kind, ts = msg.timestamp()
            ts = ts if kind else None
            read += 1
            if (since_ms is not None or until_ms is not None) and (
                ts is None or (since_ms is not None and ts < since_ms) or (until_ms is not None and ts >= until_ms)
            ):
                continue
            messages.append(Message(Origin(topic, p, offset, ts), msg.value()))
            seen += 1
            if seen >= limit:
                break
        bar.update(read if counts_read else seen - shown)
        shown = seen
