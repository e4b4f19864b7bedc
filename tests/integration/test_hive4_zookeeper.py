"""HIVE-20794 for real: two Hive 4.0.1 metastores register themselves in ZooKeeper, and hivewire finds them.

Each runs with ``metastore.service.discovery.mode=zookeeper`` (Hive 4 reads the quorum from
``metastore.thrift.uris`` in that mode); nothing of hivewire's writes their nodes. Discovery finds both; one
is killed with SIGKILL in the middle of a client's calls, which carry on against the other with no error;
its node goes once its ZooKeeper session expires. Hive 4's own ``HiveMetaStoreClient``
(tests/java_hive4/Hive4ClientReads.java) reads what ``hivewire register`` writes for a 2.3 and for a 3.1
metastore (the test id names the release) as it reads Hive 4's own registrations. ``hivewire.spark.session``
on the two refuses Spark's built-in Hive 2.3 client and works with Hive 4.0's (spark_hive4_session.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from waiting import wait_for

import hivewire as hw
import hivewire.spark
from hivewire.data._spark import METASTORE_URIS_CONF
from hivewire.metastore import parse_uris
from hivewire.metastore._registration import Registration
from hivewire.tools import _jvm
from hivewire.tools._hive_metastore import HiveMetastore, compile_java_for, hive_jars
from hivewire.tools._local import LocalMetastore, LocalZooKeeper, find_java

PROGRAM = Path(__file__).resolve().parents[1] / "java_hive4" / "hivewire" / "test" / "Hive4ClientReads.java"
SPARK_SESSION = Path(__file__).resolve().parent / "spark_hive4_session.py"


@pytest.fixture(scope="module")
def registered(
    tmp_path_factory: pytest.TempPathFactory, zookeeper: LocalZooKeeper
) -> Iterator[tuple[str, list[HiveMetastore]]]:
    namespace = f"hms_{uuid.uuid4().hex[:8]}"
    properties = {
        "metastore.service.discovery.mode": "zookeeper",
        "metastore.thrift.uris": zookeeper.quorum,
        "metastore.zookeeper.namespace": namespace,
        "metastore.thrift.bind.host": "127.0.0.1",
        # The shortest session the test ZooKeeper grants (2 ticks): a killed metastore's node goes soon.
        "metastore.zookeeper.session.timeout": "4000ms",
    }
    servers = [
        HiveMetastore("4", workdir=tmp_path_factory.mktemp(f"hive4-zk-{i}"), properties=properties) for i in range(2)
    ]
    for server in servers:
        server.launch()
    try:
        for server in servers:
            server.wait_ready()
        yield namespace, servers
    finally:
        for server in servers:
            server.close()


def test_spark_sessions_on_hive4_need_its_client(
    registered: tuple[str, list[HiveMetastore]], zookeeper: LocalZooKeeper, tmp_path: Path
) -> None:
    """Spark's built-in Hive 2.3 client creates databases on Hive 4 and then fails on every table (Hive 4.0.1
    removed get_table): session() refuses it, naming metastore_version, which gives Spark Hive 4.0's client;
    a running session with that client is refused too (and left running), as is one asked for another client.
    Run before the failover test below, which kills one of the two metastores."""
    namespace, _ = registered
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": os.pathsep.join(sys.path)}

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        args = [sys.executable, str(SPARK_SESSION), zookeeper.quorum, namespace, str(tmp_path / "warehouse")]
        return subprocess.run([*args, *extra], capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)

    done = run()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("REFUSED "))
    assert line.endswith(" ACTIVE False"), line  # the refused session was stopped
    message = json.loads(line.removeprefix("REFUSED ").removesuffix(" ACTIVE False"))
    assert message.startswith("spark.sql.hive.metastore.version: the metastore at thrift://"), message
    assert "is Hive 4.0.1, which no longer answers get_table" in message, message
    assert "metastore_version='4.0.1'" in message, message
    # the session the user started is refused by the same check, and left running (it is theirs)
    line = next(line for line in done.stdout.splitlines() if line.startswith("RUNNING REFUSED "))
    assert line.endswith(" ACTIVE True"), line
    message = json.loads(line.removeprefix("RUNNING REFUSED ").removesuffix(" ACTIVE True"))
    assert "is Hive 4.0.1, which no longer answers get_table" in message, message
    assert "The running SparkSession cannot change its client: spark.stop() it" in message, message
    line = next(line for line in done.stdout.splitlines() if line.startswith("VERSION REFUSED "))
    message = json.loads(line.removeprefix("VERSION REFUSED "))
    assert message.startswith("a SparkSession is already running with Hive client 2.3"), message
    assert "not metastore_version='4.0.1'" in message, message

    jars = os.pathsep.join(str(jar) for jar in _jvm.resolve("hive4-spark-client"))
    done = run(jars)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    assert 'ROWS [[1, "x"], [2, "y"]]' in done.stdout, done.stdout[-3000:]


def test_hive4_registers_itself_and_a_client_fails_over_with_no_error(
    registered: tuple[str, list[HiveMetastore]], zookeeper: LocalZooKeeper
) -> None:
    namespace, servers = registered
    uris = sorted(server.uri for server in servers)
    assert sorted(hw.discover_metastores(zookeeper.quorum, namespace=namespace)) == uris
    # hivewire.spark points a SparkSession at both (test_spark_sessions_on_hive4_need_its_client runs them).
    builder = hw.spark.builder(zookeeper=zookeeper.quorum, namespace=namespace)
    assert sorted(parse_uris(builder._options[METASTORE_URIS_CONF])) == uris

    with hw.MetastoreClient.from_zookeeper(zookeeper.quorum, namespace=namespace, connect_timeout=2) as client:
        assert "default" in client.get_all_databases()
        first = client.uri
        assert first in uris
        victim = next(server for server in servers if server.uri == first)
        survivor = next(server for server in servers if server.uri != first)
        victim.stop(kill=True)  # SIGKILL: no deregistration; the node stays until the session expires
        for _ in range(20):  # reads in the middle of the calls: every one answers, none raises
            assert "default" in client.get_all_databases()
        assert client.uri == survivor.uri

    wait_for(
        lambda: hw.discover_metastores(zookeeper.quorum, namespace=namespace) == [survivor.uri],
        "the killed metastore's node to go when its ZooKeeper session expires",
        60,
    )


def hive4_client_reads(tmp_path: Path, quorum: str, namespace: str, key: str) -> str:
    """A setting of the metastore Hive 4's HiveMetaStoreClient finds through ZooKeeper discovery (a Java program)."""
    classes = compile_java_for("4", [PROGRAM], tmp_path / "classes")
    classpath = os.pathsep.join([str(classes), *(str(jar) for jar in hive_jars("4"))])
    run = subprocess.run(
        [find_java(), "-cp", classpath, "hivewire.test.Hive4ClientReads", quorum, namespace, key],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    return "".join(line.removeprefix("CONF ") for line in run.stdout.splitlines() if line.startswith("CONF "))


#: The releases whose registration by ``hivewire register`` Hive 4's client reads, and each one's fixture.
REGISTERED_RELEASES = {"2.3": "metastore", "3.1": "hive3_metastore"}


@pytest.mark.parametrize("release", list(REGISTERED_RELEASES))
def test_hive4s_own_client_reads_what_hivewire_register_writes(
    registered: tuple[str, list[HiveMetastore]], zookeeper: LocalZooKeeper, request: pytest.FixtureRequest,
    release: str, unique: str, tmp_path: Path,
) -> None:  # fmt: skip
    namespace, servers = registered  # Hive 4's own registrations (the survivor of the test above, or both)
    found = hive4_client_reads(tmp_path, zookeeper.quorum, namespace, "metastore.warehouse.dir")
    assert found in {server.warehouse.as_uri() for server in servers if server.running}

    metastore: LocalMetastore = request.getfixturevalue(REGISTERED_RELEASES[release])
    # Each release answers getConfigValue for the name it knows the warehouse by (3.1 reads both spellings).
    key = "hive.metastore.warehouse.dir" if release == "2.3" else "metastore.warehouse.dir"
    address = metastore.uri.removeprefix("thrift://")
    with Registration(address, zookeeper.quorum, f"{unique}_ns", interval=1.0, session_timeout=6.0) as reg:
        wait_for(lambda: reg.node is not None, f"hivewire's registration of the {release} metastore", 60)
        assert hive4_client_reads(tmp_path, zookeeper.quorum, f"{unique}_ns", key) == metastore.warehouse.as_uri()
