"""Helpers for testing hivewire listeners in your own test suite, with no Kafka broker and no JVM.

Event factories (``create_table_event(...)``, ``add_partition_event(...)``, ...) build realistic events;
``app.dispatch(event)`` calls the matching listeners synchronously; ``run_app(app, events)`` runs them
through the real runtime (workers, retries, dead letters) on an in-memory topic, as FastStream's test
broker does::

    source = hw.testing.run_app(app, [hw.testing.create_table_event("sales", "orders")])
    assert source.dead_letters == []

``mock_kafka()`` gives a real Kafka-protocol endpoint: librdkafka's built-in mock cluster, which ships
inside the ``confluent-kafka`` wheel. Any Kafka client, in this process or another, can connect to it;
``produce()`` publishes events there as the Apiary listener does. ``app.run`` blocks until stopped, so run
it beside the test::

    import threading

    import hivewire as hw

    app = hw.App("orders-sync", config={"endpoint.port": 0})  # 0: no /metrics port to collide with
    done = threading.Event()

    @app.on_create_table
    def created(event: hw.CreateTableEvent) -> None:
        done.set()

    with hw.testing.mock_kafka() as bootstrap:
        hw.testing.produce(bootstrap, "apiary", [hw.testing.create_table_event("sales", "orders")])
        # A new consumer group starts at the end of the topic (Drone Fly's default, latest); read from the
        # beginning to see what was produced before the group joined.
        source = hw.KafkaSource(bootstrap, "apiary", consumer_config={"auto.offset.reset": "earliest"})
        worker = threading.Thread(target=app.run, args=(source,), kwargs={"handle_signals": False})
        worker.start()
        assert done.wait(60)
        app.stop()
        worker.join()

Limits of the mock (librdkafka's, not ours): topics are created on first produce with 4 partitions;
CreateTopics/DeleteTopics are not served; a new consumer group waits about 3 s before its first
assignment; the cluster lives exactly as long as the ``with`` block.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from hivewire.tools._sample_events import (
    add_partition_event,
    alter_database_event,
    alter_partition_event,
    alter_table_event,
    create_database_event,
    create_table_event,
    drop_database_event,
    drop_partition_event,
    drop_table_event,
    insert_event,
    make_event,
)
from hivewire.tools._sample_objects import make_database, make_partition, make_table

if TYPE_CHECKING:
    from unittest.mock import MagicMock

    from typing_extensions import Unpack

    from hivewire.events._model import (
        EventType,
        ListenerEvent,
    )
    from hivewire.runtime._app import App
    from hivewire.runtime._listener import ListenerOptions
    from hivewire.runtime._source import MemorySource

# The helpers of hivewire.testing: these four, and the objects and events made by the two modules above.
__all__ = [
    "add_partition_event",
    "alter_database_event",
    "alter_partition_event",
    "alter_table_event",
    "create_database_event",
    "create_table_event",
    "drop_database_event",
    "drop_partition_event",
    "drop_table_event",
    "insert_event",
    "make_database",
    "make_event",
    "make_partition",
    "make_table",
    "mock_kafka",
    "mock_listener",
    "produce",
    "run_app",
]


@contextlib.contextmanager
def mock_kafka(num_brokers: int = 1) -> Iterator[str]:
    """Run a librdkafka mock cluster for the duration of the block; yield its bootstrap servers string."""
    from confluent_kafka import Producer

    owner = Producer(
        {
            "test.mock.num.brokers": num_brokers,
            "bootstrap.servers": "",
            "logger": logging.getLogger("hivewire.testing.mock_kafka"),
        }
    )
    try:
        metadata = owner.list_topics(timeout=10)
        yield ",".join(f"{b.host}:{b.port}" for b in sorted(metadata.brokers.values(), key=lambda b: b.id))
    finally:
        owner.flush(5)
        del owner


def produce(bootstrap_servers: str, topic: str, events: Iterable[ListenerEvent | bytes]) -> int:
    """Publish ``events`` to ``topic`` as the Apiary listener does: Apiary JSON, each table's events in the
    partition ``hivewire.apiary.partition_for`` picks (raw ``bytes`` are sent as they are, to partition 0).
    Returns how many were acknowledged; raises :class:`~hivewire.errors.HivewireError` if any was not."""
    from confluent_kafka import KafkaError, KafkaException, Producer

    from hivewire.errors import HivewireError
    from hivewire.events._apiary import encode, partition_for

    failures: list[KafkaError] = []

    def delivered(err: KafkaError | None, _msg: object) -> None:
        if err is not None:
            failures.append(err)

    producer = Producer(
        {
            "bootstrap.servers": bootstrap_servers,
            "enable.idempotence": True,  # retries keep each partition's order, as the Apiary listener's do
            "linger.ms": 5,
            "logger": logging.getLogger("hivewire.testing.produce"),
        }
    )
    try:
        deadline = time.monotonic() + 10
        metadata = producer.list_topics(topic, timeout=10).topics[topic]
        while (metadata.error is not None or not metadata.partitions) and time.monotonic() < deadline:
            time.sleep(0.1)  # a broker that creates topics on first use answers "unknown" until it has
            metadata = producer.list_topics(topic, timeout=10).topics[topic]
        if metadata.error is not None or not metadata.partitions:
            raise HivewireError(
                f"topic {topic!r} is not available on {bootstrap_servers} ({metadata.error}); "
                "create it first if the cluster does not create topics on first use"
            )
        partitions = len(metadata.partitions)
        sent = 0
        for item in events:
            if isinstance(item, bytes):
                value, partition = item, 0
            else:
                value, partition = encode(item), partition_for(item.qualified_name, partitions)
            while True:
                try:
                    producer.produce(topic, value, partition=partition, on_delivery=delivered)
                    break
                except BufferError:  # librdkafka's local queue is full: let deliveries drain it
                    producer.poll(0.1)
            sent += 1
        left = producer.flush(30)
    except KafkaException as e:
        raise HivewireError(f"producing to {topic!r} on {bootstrap_servers} failed: {e}") from e
    if left:
        raise HivewireError(f"{left} of {sent} messages to {topic!r} were not acknowledged within 30 s")
    if failures:
        raise HivewireError(f"{len(failures)} of {sent} messages to {topic!r} were refused (first: {failures[0]})")
    return sent


def run_app(
    app: App,
    events: Iterable[ListenerEvent | bytes],
    *,
    config: Mapping[str, str | int | float | bool] | None = None,
    partitions: int = 4,
    raise_errors: bool = True,
) -> MemorySource:
    """Run ``app`` through the real runtime (workers, retries, dead letters, commits) on ``events``.

    Events are encoded to Apiary JSON first, exactly as they travel through Kafka (raw ``bytes`` are sent
    as they are, so malformed messages can be tested too). Returns when every event is handled or
    dead-lettered; the returned :class:`~hivewire.runtime.MemorySource` holds ``dead_letters`` and
    ``committed``. ``config`` overrides settings (retries default to 3 attempts, 10 ms apart).

    A listener that fails on an event after its retries makes ``run_app`` raise that listener's own exception
    (the first one, once every event is done), so the test fails where the listener did; with
    ``raise_errors=False`` it returns, and the failures are in ``dead_letters`` as in production.
    """
    from hivewire.config._config import Config
    from hivewire.events._apiary import encode
    from hivewire.runtime._source import MemorySource

    source = MemorySource(partitions=partitions)
    for item in events:
        source.send(item if isinstance(item, bytes) else encode(item))
    settings = {
        "endpoint.port": "0",
        "hivewire.retry.max.attempts": "3",
        "hivewire.retry.initial.delay.ms": "10",
        "hivewire.retry.multiplier": "1",
        "hivewire.commit.interval.ms": "20",
        **(config or {}),
    }
    app.run(source, config=Config.load(base={**app.config, **settings}, env={}), handle_signals=False)
    failures = app._failures
    if raise_errors and failures:
        raise failures[0][1]
    return source


def mock_listener(app: App, *types: EventType | str, **options: Unpack[ListenerOptions]) -> MagicMock:
    """Register a :class:`unittest.mock.MagicMock` as a listener of ``types`` (all when none is given) and return
    it, to assert on the events a filter lets through without writing a listener (FastStream's
    ``handler.mock``)::

        app = hw.App("orders-sync")
        mock = hw.testing.mock_listener(app, hw.EventType.CREATE_TABLE, db="sales")
        hw.testing.run_app(app, [hw.testing.create_table_event("sales", "orders")])
        mock.assert_called_once()
        assert mock.call_args.args[0].table_name == "orders"

    ``options`` are those of :meth:`hivewire.App.on` (``db``, ``table``, ``status``, ``name``: "mock" unless
    given, ...); the mock's ``side_effect`` makes it fail or do more.
    """
    from unittest.mock import MagicMock

    options["name"] = options.get("name") or "mock"
    mock = MagicMock(name=options["name"])
    app.add_listener(mock, types=types or None, **options)
    return mock
