"""Session-wide test peers: Drone Fly 1.0.9 and 1.0.8 and ``hivewire run`` side by side on one topic.

Each is started at most once per session, and only when a test asks for it (a Drone Fly costs a core for
half a minute and a gigabyte):

* ``peers_topic``       an Apiary topic (4 partitions) on the session's broker, which every peer consumes
* ``peers_properties``  the one properties file Drone Fly and ``hivewire run`` both start from (bootstrap
                        servers, topic, ``instance.name``, ``auto.offset.reset=earliest``; no listener list:
                        each side names its own recorder)
* ``dronefly_109``, ``dronefly_108``  a started :class:`dronefly.DroneFly` of that release with the tests'
                        Java recorder, in the groups ``apiary-kafka-metastore-receiver-dronefly-<release>``
* ``hivewire_run``      ``hivewire run`` with the Python recorder, in the file's group

They all consume the same topic from its start, so a test publishes under a database of its own (``unique``)
and reads only that database's records (:func:`of_database`).
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

# The peer tests reuse the integration tests' machinery (the workload, the oracle's comparisons).
sys.path.append(str(Path(__file__).resolve().parents[1] / "integration"))

from dronefly import DroneFly, HivewireRun, write_properties

PEERS_PARTITIONS = 4


@pytest.fixture(scope="session")
def peers_topic(kafka: str) -> str:
    topic = f"peers-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": kafka})
    for future in admin.create_topics(
        [NewTopic(topic, num_partitions=PEERS_PARTITIONS, replication_factor=1)]
    ).values():
        future.result(30)
    return topic


@pytest.fixture(scope="session")
def peers_properties(tmp_path_factory: pytest.TempPathFactory, kafka: str, peers_topic: str) -> Path:
    settings = {
        "apiary.bootstrap.servers": kafka,
        "apiary.kafka.topic.name": peers_topic,
        "instance.name": "hivewire-peers",
        "apiary.messaging.consumer.auto.offset.reset": "earliest",
    }
    return write_properties(tmp_path_factory.mktemp("peers") / "dronefly.properties", settings)


def _dronefly(release: str, properties: Path, workdir: Path) -> Iterator[DroneFly]:
    peer = DroneFly(release, properties, workdir=workdir, overrides={"instance.name": f"dronefly-{release}"})
    peer.start()
    yield peer
    peer.stop()


@pytest.fixture(scope="session")
def dronefly_109(tmp_path_factory: pytest.TempPathFactory, peers_properties: Path) -> Iterator[DroneFly]:
    yield from _dronefly("1.0.9", peers_properties, tmp_path_factory.mktemp("dronefly-1.0.9"))


@pytest.fixture(scope="session")
def dronefly_108(tmp_path_factory: pytest.TempPathFactory, peers_properties: Path) -> Iterator[DroneFly]:
    yield from _dronefly("1.0.8", peers_properties, tmp_path_factory.mktemp("dronefly-1.0.8"))


@pytest.fixture(scope="session")
def hivewire_run(tmp_path_factory: pytest.TempPathFactory, peers_properties: Path) -> Iterator[HivewireRun]:
    run = HivewireRun(peers_properties, workdir=tmp_path_factory.mktemp("hivewire-run"))
    run.start()
    yield run
    run.stop()
