"""Dead letters sent back through the listener that gave up on them: ``hivewire dlq replay``.

A dead letter is the original Apiary message with headers saying which listener gave up and why
(``docs/runtime.md``, "Dead letters"). Replaying calls that listener again (only that one: the app's other
listeners handled the message already) with the event, once, and reports what happened. Nothing is removed
from the dead-letter topic (Kafka cannot): a replay reads the topic from its start.

Replays are recorded (:class:`ReplayLog`) in a topic beside the dead letters, ``<dead-letter topic>.replays``:
per replayed or failed letter, a copy of the letter with ``hivewire.replay.*`` headers (which letter, when,
the result, the error), keyed by the letter's ``topic/partition@offset``. Kafka, not a local file, because the
letters are there already: whoever can read them (another operator, another machine, a later container) sees
what was replayed, with the same retention and access rights, and ``hivewire tail`` shows the record. A letter
whose last record says ``replayed`` is skipped unless asked again (``again``); one that failed is tried again.
Selection is by listener, error, event, the letter's offset, and the source record's partition and offset
(``hivewire.source.*``): letters are keyed by table, so they are not on their source's partition numbers.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone

from hivewire.config._config import Config
from hivewire.config._kafka import KafkaValue, consumer_settings
from hivewire.errors import HivewireError
from hivewire.runtime._app import App
from hivewire.runtime._frames import user_traceback
from hivewire.tools._tail import Filter, NoSuchTopic, Record, tail

_EVERYTHING = Filter()

#: The listener name of messages the decoder dead-lettered (nothing can handle them until they change).
DECODER = "hivewire.decoder"


@dataclass(frozen=True)
class Selection:
    """Which dead letters to replay: listeners and error texts (shell-style patterns; all when empty), the
    event filter of ``hivewire tail``, and the offsets of the dead-letter topic from ``min_offset``."""

    listeners: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    events: Filter = _EVERYTHING
    min_offset: int = 0
    #: (partition, from offset) of the source topic: only letters whose source record is at one of them.
    sources: tuple[tuple[int, int], ...] = ()

    def __call__(self, record: Record) -> bool:
        if record.origin.offset < self.min_offset or record.event is None:
            return False
        if self.sources and not self._from_source(record.headers):
            return False
        listener = record.headers.get("hivewire.listener", "")
        if self.listeners and not any(fnmatch.fnmatchcase(listener, p) for p in self.listeners):
            return False
        error = record.headers.get("hivewire.error", "")
        if self.errors and not any(fnmatch.fnmatchcase(error, f"*{p}*") for p in self.errors):
            return False
        return self.events(record.event)

    def _from_source(self, headers: Mapping[str, str]) -> bool:
        try:
            partition = int(headers.get("hivewire.source.partition", ""))
            offset = int(headers.get("hivewire.source.offset", ""))
        except ValueError:
            return False
        return any(partition == p and offset >= o for p, o in self.sources)


@dataclass(frozen=True)
class Outcome:
    """What replaying one dead letter did: ``replayed``, ``failed`` (with the error and its traceback),
    ``skipped`` (why), or ``selected`` (a dry run)."""

    record: Record
    listener: str
    result: str
    detail: str = ""
    traceback: str = ""


def letter_id(record: Record) -> str:
    """A dead letter's name in the replay record: ``topic/partition@offset``."""
    return str(record.origin)


def replay(
    app: App,
    records: Iterable[Record],
    selection: Selection,
    *,
    config: Config | None = None,
    dry_run: bool = False,
    replayed: Mapping[str, str] | None = None,
) -> Iterator[Outcome]:
    """Call, for each selected dead letter, the app's listener named in its ``hivewire.listener`` header with
    its event, once. Yields an :class:`Outcome` per selected letter; a listener that raises again is reported
    (``failed``), not retried, and the next letter goes on. A letter in ``replayed`` (its id: when it was
    replayed) is skipped."""
    by_name = {listener.name: listener for listener in app.listeners}
    settings = config if config is not None else app.config
    done = replayed or {}
    for record in records:
        if not selection(record):
            continue
        name = record.headers.get("hivewire.listener", "")
        when = done.get(letter_id(record))
        if when is not None:
            yield Outcome(record, name, "skipped", f"replayed at {when} (--again replays it again)")
            continue
        event = record.event
        assert event is not None  # the selection takes only decoded letters
        listener = by_name.get(name)
        if listener is None:
            reason = (
                "the decoder dead-lettered it: it did not decode then"
                if name == DECODER
                else f"the app has no listener {name!r} (it has {', '.join(sorted(by_name)) or 'none'})"
            )
            yield Outcome(record, name, "skipped", reason)
            continue
        if not listener.accepts(event):
            yield Outcome(record, name, "skipped", f"listener {name} no longer takes {event.event_type.value} events")
            continue
        if dry_run:
            yield Outcome(record, name, "selected", record.headers.get("hivewire.error", ""))
            continue
        listener.bind(settings)
        try:
            listener.handlers[event.event_type](event.copy())
        except Exception as e:
            yield Outcome(record, name, "failed", f"{type(e).__name__}: {e}", user_traceback(e))
        else:
            yield Outcome(record, name, "replayed")


_SHARED_PREFIXES = ("security.", "sasl.", "ssl.", "client.dns.", "socket.", "broker.address.family")


class ReplayLog:
    """The record of replays of one dead-letter topic, in ``<topic>.replays`` (see the module docstring)."""

    def __init__(
        self, bootstrap_servers: str, topic: str, consumer_config: Mapping[str, KafkaValue] | None = None
    ) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.topic = f"{topic}.replays"
        self._consumer_config = dict(consumer_config or {})
        self._producer: object | None = None

    def replayed(self) -> dict[str, str]:
        """The letters whose last record says ``replayed``, and when (UTC, ISO 8601)."""
        last: dict[str, tuple[str, str]] = {}
        try:
            records = tail(
                self.bootstrap_servers,
                self.topic,
                consumer_config=self._consumer_config,
                from_beginning=True,
                exit_at_end=True,
                end_level=logging.DEBUG,  # the command's own read of the dead letters says it, once
            )
            for record in records:
                headers = record.headers
                letter = headers.get("hivewire.replay.letter")
                if letter:
                    last[letter] = (headers.get("hivewire.replay.result", ""), headers.get("hivewire.replay.at", "?"))
        except NoSuchTopic:
            return {}  # nothing replayed yet
        return {letter: when for letter, (result, when) in last.items() if result == "replayed"}

    def record(self, outcome: Outcome) -> None:
        """Write what replaying one letter did (``replayed`` or ``failed``): the letter, with its headers and
        ``hivewire.replay.*``."""
        from confluent_kafka import Producer

        if self._producer is None:
            shared = {
                k: v
                for k, v in consumer_settings(self._consumer_config).config.items()
                if k.startswith(_SHARED_PREFIXES)
            }
            self._producer = Producer({"bootstrap.servers": self.bootstrap_servers, "acks": "all", **shared})
        producer = self._producer
        assert isinstance(producer, Producer)
        letter = letter_id(outcome.record)
        headers = {
            **outcome.record.headers,
            "hivewire.replay.letter": letter,
            "hivewire.replay.result": outcome.result,
            "hivewire.replay.at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "hivewire.replay.detail": outcome.detail[:4000],
        }
        producer.produce(
            self.topic,
            value=outcome.record.value,
            key=letter.encode(),
            headers=[(k, v.encode()) for k, v in headers.items()],
        )
        producer.poll(0)

    def close(self, timeout: float = 30.0) -> None:
        """Wait until the broker has every record; raise if it has not within ``timeout`` seconds."""
        from confluent_kafka import Producer

        producer, self._producer = self._producer, None
        if isinstance(producer, Producer):
            left = producer.flush(timeout)
            if left:
                raise HivewireError(
                    f"{left} replay record(s) not written to {self.topic} within {timeout:.0f} s: "
                    "those letters may be replayed again next time"
                )
