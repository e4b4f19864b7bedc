"""Session-wide real services for the test suite.

Tests under ``tests/unit`` are marked ``unit`` (no external processes); tests under ``tests/integration``
are marked ``integration`` and may use these fixtures, each started once per session on free ports (``make test``
runs two sessions side by side with pytest-xdist, each with its own services):

* ``metastore``  a real Hive Metastore 2.3 (pyspark's jars, Derby in a temp dir) -> ``.uri``
* ``zookeeper``  a real ZooKeeper 3.9 (pyspark's jars) -> ``.quorum``
* ``kafka``      a real Apache Kafka broker, KRaft (``kafka_broker``: the :class:`KafkaBroker`; its jars from
                 Maven Central through ``make jvm``) -> bootstrap servers string
* ``kafka_mock`` librdkafka's mock cluster, only where the mock can do what a broker cannot (each use says why)
* ``kafka_cluster``  three brokers (replication factor 3, ``min.insync.replicas=2``), for the tests that kill one
* ``recorded_metastore``  a second Hive Metastore 2.3 that loads the Java listeners of ``tests/java``
                 (compiled at session start with the JDK's javac): ``RecordingListener`` records what the
                 metastore itself fires, the oracle for hivewire's events (see ``tests/oracle.py``); it has
                 Hive's lock tables (``TransactionTables``), so Iceberg's HiveCatalog can commit to it
* ``sasl_metastore``  the real metastore handler behind Thrift's SASL server transport (DIGEST-MD5, PLAIN;
                 ``tests/sasl_metastore.py``)
* ``spark_cluster``  a Spark standalone master and one 2-core worker, started with the pyspark wheel's own
                 ``spark-class`` -> ``.url``; its executors run this interpreter with this test run's
                 ``PYTHONPATH`` (so they import the hivewire under test)

Tests under ``tests/peers`` run hivewire beside the test peers Maven Central does not serve (Drone Fly, Apiary
8.x), resolved from the peers' Maven repository (``$HIVEWIRE_PEERS_M2``, make's ``PEERS_M2``; default
``../shared/peers/m2``). They are marked ``integration`` and ``peers``; without that repository they are not
collected, and the run's header says so in one line.

A missing prerequisite (Java 17+, pyspark) makes the fixture fail with the reason; nothing is skipped.
When a test fails, the tail of each service log it used is attached to the report.
"""

from __future__ import annotations

import itertools
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from oracle import RecordedMetastore, recorded_hive_metastore
from sasl_metastore import SaslMetastore

from hivewire.tools import _jvm
from hivewire.tools._hive_metastore import HiveMetastore
from hivewire.tools._kafka_broker import KafkaBroker, KafkaCluster
from hivewire.tools._local import (
    JVM_OPTIONS_ENV,
    LocalMetastore,
    LocalService,
    LocalSparkCluster,
    LocalZooKeeper,
    compile_java,
)
from hivewire.tools._testing import mock_kafka

ROOT = Path(__file__).resolve().parent.parent

#: The services the tests start (metastores, ZooKeeper, Kafka brokers, Drone Fly: hivewire.tools._local's) compile
#: with C1 alone: they live minutes, and C2's compiling costs more CPU than its code saves them. On
#: tests/integration/test_apiary_listener.py (two Hive Metastores, Kafka): 96.5 CPU s and 138 s without, 49.1
#: CPU s and 77 s with. C1's frames are larger: Derby's parser recursing through a 600-partition drop needs the
#: larger stack. Spark keeps C2 (its generated code runs long: with C1 the docs' Spark example ran past its
#: 600 s). A value already set wins (``HIVEWIRE_JVM_OPTIONS= make test`` runs them as users do).
os.environ.setdefault(JVM_OPTIONS_ENV, "-XX:TieredStopAtLevel=1 -Xss4m")

#: Spark's JVMs (in-process sessions, the drivers tests start, the docs' examples: every pyspark launch reads
#: ``PYSPARK_SUBMIT_ARGS``) compile with C2 only what runs ten times more often than HotSpot's defaults ask:
#: most live seconds to a minute, where C2 compiling everything a few thousand calls warm costs more CPU than
#: it saves. Measured on a small local[1] session: 26-29 CPU s with the defaults, 16 with these (C1 alone: 14);
#: the docs' fast Spark example's call took 37 s with these, 40 s with the defaults, 102 s with C1 alone.
#: ``defaultJavaOptions`` go before a session's own ``extraJavaOptions``. A value already set wins.
_SPARK_JIT = (
    "-XX:Tier4InvocationThreshold=50000 -XX:Tier4MinInvocationThreshold=6000 "
    "-XX:Tier4CompileThreshold=150000 -XX:Tier4BackEdgeThreshold=400000"
)
os.environ.setdefault(
    "PYSPARK_SUBMIT_ARGS",
    f"--conf 'spark.driver.defaultJavaOptions={_SPARK_JIT}' --conf 'spark.executor.defaultJavaOptions={_SPARK_JIT}' "
    "pyspark-shell",
)


#: The files that take longest (Spark drivers, kill -9 runs, docs blocks in fresh interpreters), longest first.
#: ``make test`` runs two test processes (pytest-xdist, a file at a time, in this order: --no-loadscope-reorder):
#: starting these first keeps one of them from starting last and running on alone.
LONGEST_FIRST = (
    "peers/test_dronefly_side_by_side.py",
    "peers/test_apiary8_listener.py",
    "integration/test_kafka_readiness.py",
    "peers/test_dronefly_notification_log.py",
    "peers/test_dronefly_harness.py",
    "integration/test_docs_examples.py",
    "integration/test_spark_source.py",
    "integration/test_metastore_client.py",
    "integration/test_arrow_spark.py",
    "integration/test_runtime_process.py",
    "integration/test_kafka_faults.py",
    "integration/test_archive.py",
    "integration/test_shim_kafka.py",
    "integration/test_outages.py",
)


#: Files that share a session service few other files use, run by one test process as one unit (pytest-xdist
#: hands out work a file at a time; these go together), so that service starts once in the run, not once in
#: each process: two Drone Fly releases and ``hivewire run``, a Hive 4 metastore writing a notification log,
#: three Kafka brokers, Hive 3.1 and 4.0 metastores, the recorded Hive 4 metastore.
SHARED_SERVICES = {
    "drone-fly": (
        "peers/test_dronefly_side_by_side.py",
        "peers/test_dronefly_harness.py",
        "peers/test_dronefly_notification_log.py",
        "integration/test_notification_log_releases.py",
    ),
    "kafka-cluster": ("integration/test_kafka_readiness.py", "integration/test_kafka_faults.py"),
    "hive-releases": (
        "integration/test_metastore_releases.py",
        "integration/test_shim_peer_clients_releases.py",
        "integration/test_hive4_zookeeper.py",
    ),
    "recorded-hive4": ("integration/test_shim_fidelity.py", "integration/test_shim_fidelity_hive4.py"),
}
UNIT_OF = {path: unit for unit, paths in SHARED_SERVICES.items() for path in paths}


def _unit(path: str) -> str:
    """The work unit of a test file (a path under tests/): its shared-services group, else itself."""
    return UNIT_OF.get(path, path)


@pytest.hookimpl(trylast=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With ``--dist loadfile``: a file at a time, except the files of one :data:`SHARED_SERVICES` unit, which
    go to one process together."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedServicesScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return _unit(path.removeprefix("tests/"))

    return SharedServicesScheduling(config, log)


def pytest_report_header(config: pytest.Config) -> str:
    repository = _jvm.peers_repository()
    if repository is None:
        return f"peers: no peers repository (set {_jvm.PEERS_ENV}): tests/peers (Drone Fly, Apiary 8.x) not run"
    return f"peers: {repository}"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path == ROOT / "tests" / "peers" and _jvm.peers_repository() is None:
        return True
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        parts = Path(str(item.fspath)).relative_to(ROOT / "tests").parts
        if parts and parts[0] in ("unit", "integration"):
            item.add_marker(getattr(pytest.mark, parts[0]))
        elif parts and parts[0] == "peers":
            item.add_marker(pytest.mark.integration)
            item.add_marker(pytest.mark.peers)

    def rank(item: pytest.Item) -> tuple[int, str]:  # a unit's files together, at its longest file's place
        unit = _unit(Path(str(item.fspath)).relative_to(ROOT / "tests").as_posix())
        files = SHARED_SERVICES.get(unit, (unit,))
        first = min(LONGEST_FIRST.index(f) if f in LONGEST_FIRST else len(LONGEST_FIRST) for f in files)
        return first, unit if first == len(LONGEST_FIRST) and unit in SHARED_SERVICES else ""

    items.sort(key=rank)  # stable: the order within a file, and of the other files, is kept


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport:
    report: pytest.TestReport = yield
    if report.failed:
        funcargs = getattr(item, "funcargs", {})
        for value in funcargs.values():
            services = list(value) if isinstance(value, (list, tuple)) else [value]
            services += [b for svc in services if isinstance(svc, KafkaCluster) for b in svc.brokers]
            for svc in services:
                if isinstance(svc, LocalService):
                    report.sections.append((f"{svc.name} log (port {svc.port})", svc.log_tail(80)))
    return report


@pytest.fixture(scope="session")
def metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMetastore]:
    hms = LocalMetastore(workdir=tmp_path_factory.mktemp("metastore"))
    hms.start()
    yield hms
    hms.close()


#: MetaStoreEventListener classes of tests/java that the recorded metastore loads.
JAVA_LISTENERS = ["hivewire.test.RecordingListener", "hivewire.test.NotificationLogListener"]


@pytest.fixture(scope="session")
def java_classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/java compiled against pyspark's jars (needs a JDK: dev/prereqs.sh installs one for the tests)."""
    return compile_java(sorted((ROOT / "tests" / "java").rglob("*.java")), tmp_path_factory.mktemp("java"))


@pytest.fixture(scope="session")
def recorded_metastore(tmp_path_factory: pytest.TempPathFactory, java_classes: Path) -> Iterator[RecordedMetastore]:
    workdir = tmp_path_factory.mktemp("recorded-metastore")
    recording = workdir / "events.jsonl"
    recording.touch()
    hms = LocalMetastore(
        workdir=workdir,
        classpath=[java_classes],
        listeners=JAVA_LISTENERS,
        properties={
            "hivewire.test.recording.file": str(recording),
            # Hive 2.3's lock tables, for clients that lock tables around commits (Iceberg's HiveCatalog)
            "hive.metastore.init.hooks": "hivewire.test.TransactionTables",
        },
    )
    hms.start()
    yield RecordedMetastore(hms, recording)
    hms.close()


@pytest.fixture(scope="session")
def sasl_metastore(tmp_path_factory: pytest.TempPathFactory, java_classes: Path) -> Iterator[SaslMetastore]:
    hms = SaslMetastore(workdir=tmp_path_factory.mktemp("sasl-metastore"), classpath=[java_classes])
    hms.start()
    yield hms
    hms.close()


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalZooKeeper]:
    zk = LocalZooKeeper(workdir=tmp_path_factory.mktemp("zookeeper"))
    zk.start()
    yield zk
    zk.close()


#: The session broker's settings beyond a local broker's defaults: retention is checked every second, so the
#: tests that shorten a topic's retention see records deleted within seconds.
KAFKA_TEST_PROPERTIES = {"log.retention.check.interval.ms": "1000"}


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    broker = KafkaBroker(workdir=tmp_path_factory.mktemp("kafka"), properties=KAFKA_TEST_PROPERTIES)
    broker.start()
    yield broker
    broker.stop(kill=True)  # its state is the session's temp dir; a clean shutdown only costs time


@pytest.fixture(scope="session")
def kafka(kafka_broker: KafkaBroker) -> str:
    return kafka_broker.bootstrap_servers


@pytest.fixture(scope="session")
def kafka_mock() -> Iterator[str]:
    with mock_kafka(num_brokers=3) as bootstrap:
        yield bootstrap


@pytest.fixture(scope="module")
def kafka_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    with KafkaCluster(tmp_path_factory.mktemp("kafka-cluster"), size=3, properties=KAFKA_TEST_PROPERTIES) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSparkCluster]:
    pythonpath = [p for p in sys.path if p.startswith(str(ROOT))]
    with LocalSparkCluster(tmp_path_factory.mktemp("spark-cluster"), cores=2, pythonpath=pythonpath) as cluster:
        yield cluster


_counter = itertools.count()


@pytest.fixture
def unique() -> str:
    """A short name unique within the session and across concurrent sessions: ``t<pid><n><rand>``."""
    return f"t{os.getpid()}_{next(_counter)}_{uuid.uuid4().hex[:6]}"


# -- Hive 3.1 and 4.x (issue 29) ------------------------------------------------------------------------
# Standalone metastores from Maven Central (tools/_hive_metastore.py; versions pinned in tools/jvm/pom.xml),
# each started at most once per session and only when a test asks: a Hive 4 JVM costs a core for half a
# minute and a gigabyte. ``hive_metastores`` maps "2.3", "3.1" and "4" to a started server of that release.


@pytest.fixture(scope="session")
def hive3_metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HiveMetastore]:
    with HiveMetastore("3", workdir=tmp_path_factory.mktemp("hive3-metastore")) as hms:
        yield hms


@pytest.fixture(scope="session")
def hive4_metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HiveMetastore]:
    with HiveMetastore("4", workdir=tmp_path_factory.mktemp("hive4-metastore")) as hms:
        yield hms


#: The fixture of each Hive release the version tests run against ("2.3" is pyspark's, the suite's default).
HIVE_RELEASES = {"2.3": "metastore", "3.1": "hive3_metastore", "4": "hive4_metastore"}


@pytest.fixture(params=list(HIVE_RELEASES), scope="session")
def any_release_metastore(request: pytest.FixtureRequest) -> LocalMetastore:
    """A metastore of each Hive release in turn (2.3, 3.1, 4.x); the test's id names the release."""
    server: LocalMetastore = request.getfixturevalue(HIVE_RELEASES[request.param])
    return server


@pytest.fixture(scope="session")
def recorded_hive3_metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RecordedMetastore]:
    """Hive 3.1 with the recording listener (the oracle; tests/oracle.py)."""
    recorded = recorded_hive_metastore("3", tmp_path_factory.mktemp("recorded-hive3"))
    yield recorded
    recorded.server.close()


@pytest.fixture(scope="session")
def recorded_hive4_metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RecordedMetastore]:
    """Hive 4.x with the recording listener (the oracle; tests/oracle.py)."""
    recorded = recorded_hive_metastore("4", tmp_path_factory.mktemp("recorded-hive4"))
    yield recorded
    recorded.server.close()


@pytest.fixture(scope="session")
def notifying_hive3_metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RecordedMetastore]:
    """Hive 3.1 with Hive's own DbNotificationListener writing the notification log, and the oracle."""
    recorded = recorded_hive_metastore("3", tmp_path_factory.mktemp("notifying-hive3"), notifications=True)
    yield recorded
    recorded.server.close()


@pytest.fixture(scope="session")
def notifying_hive4_metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RecordedMetastore]:
    """Hive 4.0.1 with a gzip(json-2.0) notification log written by Hive's own MessageBuilder, encoder and
    RawStore (the tests' transactional glue, tests/java_hive4/.../Hive4NotificationLog.java), and the oracle."""
    recorded = recorded_hive_metastore("4", tmp_path_factory.mktemp("notifying-hive4"), notifications=True)
    yield recorded
    recorded.server.close()
