"""Every local service of a hivewire deployment in one object: ``hivewire local`` and ``hivewire demo``.

A :class:`LocalStack` starts a Hive Metastore and a ZooKeeper from pyspark's jars, Kafka with the Apiary
topic, and the hivewire shim in front of the metastore, publishing every change to the topic and registered in
ZooKeeper as Hive 4 metastores register. :meth:`LocalStack.environment` holds the environment variables that
point ``hivewire run``, ``tail``, ``archive`` and ``discover`` at it.

Kafka is a real Apache Kafka broker (:class:`~hivewire.tools._kafka_broker.KafkaBroker`, its jars from Maven
Central, fetched once by Maven and cached) whenever that can be had: the jars are cached, or Maven is installed
to fetch them. Otherwise (a ``pip install hivewire`` with no Maven) it is librdkafka's mock cluster
(:class:`MockKafka`), which speaks the protocol from inside this process, and :attr:`LocalStack.kafka_note`
says so and why; ``kafka="broker"`` or ``"mock"`` chooses.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
import threading
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from hivewire.errors import HivewireError
from hivewire.tools._jvm import can_resolve
from hivewire.tools._kafka_broker import KafkaBroker
from hivewire.tools._local import LocalMetastore, LocalZooKeeper

if TYPE_CHECKING:
    from confluent_kafka import Producer

    from hivewire_shim import Shim

# The mock cluster announces itself at INFO ("Mock cluster enabled: ..."): not news to the user who asked for it.
_QUIET_KAFKA = logging.getLogger("hivewire.local.kafka")
_QUIET_KAFKA.setLevel(logging.WARNING)

#: The namespace the shim registers in, Hive's default.
NAMESPACE = "hive_metastore"


class MockKafka:
    """librdkafka's mock cluster: a Kafka-protocol broker in this process, up until :meth:`close`.

    :attr:`bootstrap_servers` is its address. :meth:`create_topic` makes a topic with its partitions.
    """

    def __init__(self, num_brokers: int = 1) -> None:
        from confluent_kafka import Producer

        self._owner: Producer | None = Producer(
            {
                "test.mock.num.brokers": num_brokers,
                "bootstrap.servers": "",
                "logger": _QUIET_KAFKA,
            }
        )
        brokers = self._owner.list_topics(timeout=10).brokers.values()
        self.bootstrap_servers = ",".join(f"{b.host}:{b.port}" for b in sorted(brokers, key=lambda b: b.id))
        self.description = "librdkafka's mock cluster (inside this process)"

    def create_topic(self, topic: str) -> int:
        """Make ``topic`` (the mock cluster creates a topic on first mention, with 4 partitions); return its
        partition count."""
        if self._owner is None:
            raise HivewireError("the local Kafka is closed")
        found = self._owner.list_topics(topic, timeout=10).topics.get(topic)
        if found is None or found.error is not None:
            raise HivewireError(f"the local Kafka did not create {topic}: {found.error if found else 'no reply'}")
        return len(found.partitions)

    def close(self) -> None:
        owner, self._owner = self._owner, None
        if owner is not None:
            owner.flush(5)
            del owner


class LocalStack:
    """A metastore, ZooKeeper, Kafka (``topic``, :attr:`partitions`) and, with ``shim``, the shim in front of
    the metastore.

    Start with :meth:`start` or ``with``; each service runs on a free loopback port; their state lives in
    ``workdir`` (a temporary directory by default, removed on :meth:`stop`).
    """

    def __init__(
        self, *, topic: str = "apiary", shim: bool = True, workdir: str | None = None, kafka: str = "auto"
    ) -> None:
        if kafka not in ("auto", "broker", "mock"):
            raise HivewireError(f"kafka must be 'auto', 'broker' or 'mock', not {kafka!r}")
        self.topic = topic
        self.partitions = 0
        self._with_shim = shim
        self._tmp = None if workdir else tempfile.TemporaryDirectory(prefix="hivewire-local-")
        self.workdir = Path(workdir or (self._tmp.name if self._tmp else "."))
        self.metastore = LocalMetastore(workdir=self.workdir / "metastore")
        self.zookeeper = LocalZooKeeper(workdir=self.workdir / "zookeeper")
        self.kafka: KafkaBroker | MockKafka | None = None
        self.shim: Shim | None = None
        self._broker: KafkaBroker | None = None
        #: Why Kafka is what it is, for the user: empty for a real broker chosen by default.
        self.kafka_note = ""
        if kafka == "mock":
            self.kafka_note = "as asked (kafka='mock')"
        elif kafka == "broker" or can_resolve("kafka"):
            self._broker = KafkaBroker(workdir=self.workdir / "kafka")
        else:
            self.kafka_note = (
                "Maven is not installed to fetch Apache Kafka from Maven Central once (apt-get install maven, "
                "or run `make jvm` in a hivewire checkout), so Kafka is librdkafka's mock cluster: it speaks the "
                "protocol but lives inside this process, with no replication, retention or real group timings"
            )

    @property
    def bootstrap_servers(self) -> str:
        if self.kafka is None:
            raise HivewireError("the local stack is not started")
        return self.kafka.bootstrap_servers

    @property
    def kafka_description(self) -> str:
        """What the Kafka of this stack is, and, when it is the mock cluster, why."""
        if self.kafka is None:
            raise HivewireError("the local stack is not started")
        return self.kafka.description + (f": {self.kafka_note}" if self.kafka_note else "")

    @property
    def metastore_uri(self) -> str:
        """Where clients should connect: the shim when there is one (so changes become events)."""
        return self.shim.uri if self.shim is not None else self.metastore.uri

    def start(self) -> LocalStack:
        """Start every service (the two Java servers side by side); on a failure, stop what started."""
        (self.workdir / "metastore").mkdir(parents=True, exist_ok=True)
        (self.workdir / "zookeeper").mkdir(parents=True, exist_ok=True)
        try:
            errors: list[BaseException] = []

            def start_zookeeper() -> None:
                try:
                    self.zookeeper.start()
                except BaseException as e:  # reported below, in the caller's thread
                    errors.append(e)

            zookeeper = threading.Thread(target=start_zookeeper, name="hivewire-local-zookeeper")
            zookeeper.start()
            if self._broker is not None:  # the three JVMs start side by side; each is waited for below
                self._broker.launch()
            self.metastore.start()
            warm = threading.Thread(target=self._warm_up, name="hivewire-local-warm-up", daemon=True)
            warm.start()  # while Kafka and ZooKeeper finish starting
            zookeeper.join()
            if errors:
                raise errors[0]
            if self._broker is not None:
                self._broker.wait_ready()
                self.kafka = self._broker
            else:
                self.kafka = MockKafka()
            self.partitions = self.kafka.create_topic(self.topic)
            warm.join(120)
            if self._with_shim:
                from hivewire_shim import KafkaSink, Shim

                sink = KafkaSink(self.kafka.bootstrap_servers, self.topic, self.workdir / "shim-spool")
                self.shim = Shim(self.metastore.uri, sinks=[sink], zookeeper=self.zookeeper.quorum).start()
        except BaseException:
            self.stop()
            raise
        return self

    def _warm_up(self) -> None:
        """Make and drop a scratch table straight on the metastore (no event): a fresh metastore takes seconds
        over its first changes (DataNucleus and Derby prepare each kind of statement once; 10.8 s for a user's
        first six calls), which this moves to the start, beside Kafka's. Best effort: a failure is only logged."""
        from hivewire.metastore import MetastoreClient
        from hivewire.tools._sample_objects import make_database, make_table

        name = "hivewire_local_warm_up"
        try:
            with MetastoreClient(self.metastore.uri) as client:
                client.create_database(make_database(name, location=(self.workdir / f"{name}.db").as_uri()))
                client.create_table(make_table(name, "t", partition_keys={"dt": "string"}))
                client.get_table(name, "t")
                client.get_tables(name, "*")
                client.drop_table(name, "t", True)
                client.drop_database(name, True, True)
        except Exception as e:  # the stack works all the same, only its first changes are slower
            logging.getLogger("hivewire.local").debug("warming the metastore up failed: %s", e)

    def environment(self) -> dict[str, str]:
        """Environment variables that point hivewire's commands (and ``hw.App.run``) at this stack."""
        env = {
            "APIARY_BOOTSTRAP_SERVERS": self.bootstrap_servers,
            "APIARY_KAFKA_TOPIC_NAME": self.topic,
            "METASTORE_THRIFT_URIS": self.metastore_uri,
        }
        return env

    def stop(self) -> None:
        """Stop every service and remove the temporary state."""
        if self.shim is not None:
            with contextlib.suppress(Exception):
                self.shim.stop(10)
            self.shim = None
        if self.kafka is not None and self.kafka is not self._broker:
            self.kafka.close()
        self.kafka = None
        if self._broker is not None:
            self._broker.stop()
        self.metastore.stop()
        self.zookeeper.stop()
        if self._tmp is not None:
            with contextlib.suppress(OSError):
                self._tmp.cleanup()

    def __enter__(self) -> LocalStack:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
