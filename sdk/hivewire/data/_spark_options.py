"""The options of the ``hivewire`` and ``hivewire_raw`` Spark data sources (:class:`SourceOptions`), read once from
Spark's string options.

Invariants: keys are case-insensitive (Spark's own options are); every ``kafka.<key>`` goes to the consumers as
``<key>``; ``kafka.bootstrap.servers`` and ``topic`` are required; a value that is not what its key takes raises
:class:`~hivewire.errors.ConfigError` naming the key and what it takes, when the query is planned, never on an
executor. The options are plain data: Spark pickles them with the readers to its Python workers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hivewire.data._offsets import to_millis
from hivewire.errors import ConfigError

#: The prefix of the options that go to the Kafka consumers.
KAFKA_PREFIX = "kafka."


@dataclass(frozen=True)
class SourceOptions:
    """The data source's options, read from Spark's case-insensitive string options."""

    topic: str
    consumer: dict[str, str]
    starting_offsets: str
    ending_offsets: str
    starting_timestamp: int | None
    ending_timestamp: int | None
    max_events_per_split: int
    max_events_per_trigger: int | None
    fail_on_data_loss: bool
    timeout: float

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> SourceOptions:
        """Read ``options`` (keys are case-insensitive), or raise ConfigError naming the bad one."""
        given = {k.lower(): v for k, v in options.items()}
        consumer = {k[len(KAFKA_PREFIX) :]: v for k, v in given.items() if k.startswith(KAFKA_PREFIX)}
        if "bootstrap.servers" not in consumer:
            raise ConfigError(
                "kafka.bootstrap.servers", 'set the Kafka brokers: .option("kafka.bootstrap.servers", "host:9092")'
            )
        topic = given.get("topic")
        if not topic:
            raise ConfigError("topic", 'set the Apiary topic: .option("topic", "apiary")')
        return cls(
            topic=topic,
            consumer=consumer,
            starting_offsets=given.get("startingoffsets", "earliest"),
            ending_offsets=given.get("endingoffsets", "latest"),
            starting_timestamp=_millis(given, "startingtimestamp"),
            ending_timestamp=_millis(given, "endingtimestamp"),
            max_events_per_split=_whole(given, "maxeventspersplit", 100_000),
            max_events_per_trigger=_whole(given, "maxeventspertrigger", None),
            fail_on_data_loss=_flag(given, "failondataloss", True),
            timeout=float(_whole(given, "timeoutseconds", 60)),
        )


def _whole(given: Mapping[str, str], key: str, default: int | None) -> Any:
    text = given.get(key)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigError(key, f"must be a whole number of at least 1, not {text!r}")
    return value


def _flag(given: Mapping[str, str], key: str, default: bool) -> bool:
    text = given.get(key)
    if text is None:
        return default
    if text.lower() not in ("true", "false"):
        raise ConfigError(key, f"must be true or false, not {text!r}")
    return text.lower() == "true"


def _millis(given: Mapping[str, str], key: str) -> int | None:
    """A time bound: epoch milliseconds or an ISO 8601 time (naive = UTC), as ``read_events`` takes them."""
    text = given.get(key)
    if text is None:
        return None
    return to_millis(int(text) if text.lstrip("-").isdigit() else text)
