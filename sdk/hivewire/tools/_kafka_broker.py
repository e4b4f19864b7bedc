"""Apache Kafka on this machine: KRaft brokers from Maven Central's released jars, one process each.

A :class:`KafkaBroker` is one JVM that is both broker and controller (``process.roles=broker,controller``), on
free loopback ports, its log directory in its own working directory, formatted on first start and kept across
:meth:`~hivewire.tools._local.LocalService.restart` (so a restarted broker has its records and offsets). The jars
are the ``kafka`` component of :mod:`hivewire.tools._jvm` (Maven fetches them once; then they are cached).
A :class:`KafkaCluster` is several of them forming one controller quorum, replicating each other's partitions.

Beside the ``PLAINTEXT`` listener every broker has, ``listeners`` adds named listeners of other security
protocols (``{"SECURE": "SASL_SSL", "MTLS": "SSL"}``) on ports of their own; their settings (certificates,
SASL mechanisms, an authorizer) come in ``properties``, and ``scram_users`` are written into the metadata when
the storage is formatted, as ``kafka-storage format --add-scram`` does.

Invariants: the ``PLAINTEXT`` listener is the inter-broker and the first advertised one; the controller listener
is never advertised to clients; a broker is ready only when it names itself in the metadata a client receives.
"""

from __future__ import annotations

import base64
import contextlib
import os
import subprocess
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

from hivewire.errors import HivewireError
from hivewire.tools._jvm import resolve, version
from hivewire.tools._local import LocalService, find_java, free_port

#: Broker settings for a local broker: topics made on first use with 4 partitions, as the Apiary producer
#: expects to find; a consumer group that starts with no delay; session timeouts as short as tests choose;
#: records kept whatever their timestamps (a topic's own ``retention.ms`` still applies).
_LOCAL_DEFAULTS = {
    "log.retention.ms": "-1",
    "num.partitions": "4",
    "auto.create.topics.enable": "true",
    "offsets.topic.num.partitions": "8",
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "1000",
    "log.retention.check.interval.ms": "5000",
}


def new_cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes in URL-safe base64 without padding, as ``kafka-storage random-uuid``;
    never one that starts with ``-``, which the storage tool's command line would take for an option."""
    while True:
        found = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not found.startswith("-"):
            return found


class KafkaBroker(LocalService):
    """One Apache Kafka broker and controller in KRaft mode; :attr:`bootstrap_servers` is its PLAINTEXT address.

    Alone (the default) it is a one-node quorum with replication factor 1. :class:`KafkaCluster` gives several
    brokers the same ``cluster_id`` and ``voters``.
    """

    name = "kafka"
    main_class = "kafka.Kafka"
    log_level = "WARN"

    def __init__(
        self,
        *,
        port: int | None = None,
        workdir: str | os.PathLike[str] | None = None,
        node_id: int = 1,
        controller_port: int | None = None,
        voters: str | None = None,
        cluster_id: str | None = None,
        listeners: Mapping[str, str] | None = None,
        properties: Mapping[str, str] | None = None,
        scram_users: Mapping[str, str] | None = None,
        start_timeout: float = 180.0,
        jvm_options: tuple[str, ...] = ("-Xmx768m",),
    ) -> None:
        super().__init__(port=port, workdir=workdir, start_timeout=start_timeout, jvm_options=jvm_options)
        self.node_id = node_id
        self.controller_port = controller_port or free_port()
        self.voters = voters or f"{node_id}@127.0.0.1:{self.controller_port}"
        self.cluster_id = cluster_id or new_cluster_id()
        self.listener_ports = {name: free_port() for name in (listeners or {})}
        self._protocols = dict(listeners or {})
        self.properties = dict(properties or {})
        self.scram_users = dict(scram_users or {})

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    def address(self, listener: str) -> str:
        """``host:port`` of a named listener given in ``listeners`` (``PLAINTEXT`` for the default one)."""
        if listener == "PLAINTEXT":
            return self.bootstrap_servers
        if listener not in self.listener_ports:
            raise HivewireError(f"broker {self.node_id} has no listener {listener!r}; it has {sorted(self._protocols)}")
        return f"127.0.0.1:{self.listener_ports[listener]}"

    @property
    def data_dir(self) -> Path:
        return self.workdir / "data"

    @property
    def description(self) -> str:
        return f"Apache Kafka {version('kafka')} (KRaft broker and controller, Maven Central's jars)"

    def _jars(self) -> list[str]:
        return [str(jar) for jar in resolve("kafka")]

    def _server_properties(self) -> dict[str, str]:
        names = ["PLAINTEXT", *self._protocols]
        listeners = [f"{n}://127.0.0.1:{self.port if n == 'PLAINTEXT' else self.listener_ports[n]}" for n in names]
        protocols = {"PLAINTEXT": "PLAINTEXT", "CONTROLLER": "PLAINTEXT", **self._protocols}
        return {
            "process.roles": "broker,controller",
            "node.id": str(self.node_id),
            "controller.quorum.voters": self.voters,
            "listeners": ",".join([*listeners, f"CONTROLLER://127.0.0.1:{self.controller_port}"]),
            "advertised.listeners": ",".join(listeners),
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": ",".join(f"{n}:{p}" for n, p in protocols.items()),
            "log.dirs": str(self.data_dir),
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            **_LOCAL_DEFAULTS,
            **self.properties,
        }

    def _args(self) -> list[str]:
        return [str(self.workdir / "server.properties")]

    def _prepare(self) -> list[str]:
        config = self.workdir / "server.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in self._server_properties().items()))
        if not (self.data_dir / "meta.properties").exists():
            self._format(config)
        return []

    def _format(self, config: Path) -> None:
        """Format the log directory for the cluster, with the SCRAM credentials in its first metadata."""
        scram = [
            arg for user, password in self.scram_users.items()
            for arg in ("--add-scram", f"SCRAM-SHA-512=[name={user},password={password}]")
        ]  # fmt: skip
        cmd = [find_java(), "-cp", os.pathsep.join(self._jars()), "kafka.tools.StorageTool", "format"]
        cmd += ["-t", self.cluster_id, "-c", str(config), "--ignore-formatted", *scram]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=self.workdir)
        if done.returncode != 0:
            # the command line carries the SCRAM passwords: say only what failed and what Kafka printed
            raise HivewireError(
                f"formatting the Kafka log directory {self.data_dir} failed:\n{done.stdout}{done.stderr}"
            )

    def _ready(self) -> bool:
        if not super()._ready():
            return False
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers, "socket.timeout.ms": 2000})
        try:
            return self.node_id in admin.list_topics(timeout=3).brokers
        except Exception:  # KafkaException until the broker serves metadata
            return False

    def create_topic(
        self, topic: str, partitions: int = 4, replication: int = 1, config: Mapping[str, str] | None = None
    ) -> int:
        """Make ``topic`` unless it exists; return its partition count."""
        return create_topic(self.bootstrap_servers, topic, partitions, replication, config)


def create_topic(
    bootstrap_servers: str,
    topic: str,
    partitions: int = 4,
    replication: int = 1,
    config: Mapping[str, str] | None = None,
) -> int:
    """Make ``topic`` on a broker unless it exists, and wait until its partitions have leaders; return their count."""
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap_servers})
    future = admin.create_topics([NewTopic(topic, partitions, replication, config=dict(config or {}))])[topic]
    try:
        future.result(60)
    except KafkaException as e:
        if e.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
            raise HivewireError(f"could not create the topic {topic} on {bootstrap_servers}: {e.args[0].str()}") from e
    deadline = time.monotonic() + 60
    while True:
        found = admin.list_topics(topic, timeout=10).topics.get(topic)
        ready = found is not None and found.error is None and found.partitions
        if ready and all(p.leader >= 0 for p in found.partitions.values()):
            return len(found.partitions)
        if time.monotonic() > deadline:
            raise HivewireError(f"the topic {topic} on {bootstrap_servers} has no leader for every partition")
        time.sleep(0.2)


class KafkaCluster:
    """``size`` :class:`KafkaBroker` processes forming one KRaft quorum (every one a controller and a broker).

    ``properties`` go to every broker. By default topics get ``size`` replicas and need ``size - 1`` in sync
    (three brokers: replication factor 3, ``min.insync.replicas=2``), so one broker may die without loss.
    """

    def __init__(
        self,
        workdir: str | os.PathLike[str],
        *,
        size: int = 3,
        properties: Mapping[str, str] | None = None,
        start_timeout: float = 240.0,
    ) -> None:
        self.workdir = Path(workdir)
        controller_ports = [free_port() for _ in range(size)]
        voters = ",".join(f"{i + 1}@127.0.0.1:{port}" for i, port in enumerate(controller_ports))
        cluster_id = new_cluster_id()
        replicated = {
            "default.replication.factor": str(size),
            "min.insync.replicas": str(max(1, size - 1)),
            "offsets.topic.replication.factor": str(size),
            "transaction.state.log.replication.factor": str(size),
            "transaction.state.log.min.isr": str(max(1, size - 1)),
            "share.coordinator.state.topic.replication.factor": str(size),
            "share.coordinator.state.topic.min.isr": str(max(1, size - 1)),
            **(properties or {}),
        }
        self.brokers = [
            KafkaBroker(
                workdir=self.workdir / f"broker-{i + 1}",
                node_id=i + 1,
                controller_port=controller_ports[i],
                voters=voters,
                cluster_id=cluster_id,
                properties=replicated,
                start_timeout=start_timeout,
            )
            for i in range(size)
        ]

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(b.bootstrap_servers for b in self.brokers)

    def start(self) -> KafkaCluster:
        """Launch every broker (a quorum forms only when a majority runs), then wait for each to serve."""
        try:
            for broker in self.brokers:
                broker.launch()
            for broker in self.brokers:
                broker.wait_ready()
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        for broker in self.brokers:
            with contextlib.suppress(Exception):
                broker.stop()

    def __enter__(self) -> KafkaCluster:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
