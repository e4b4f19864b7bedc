"""A SparkSession on a metastore that it finds only through ZooKeeper (one session for the module)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.security import make_digest_acl

import hivewire as hw
import hivewire.data._spark as hw_spark
from hivewire.metastore._zookeeper import DiscoveryConfig
from hivewire.tools._local import LocalMetastore, LocalZooKeeper

NAMESPACE = f"spark_{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def registered(zookeeper: LocalZooKeeper, metastore: LocalMetastore) -> Iterator[str]:
    """The session metastore, registered the way Hive 4 registers itself, in a namespace of our own."""
    zk = KazooClient(hosts=zookeeper.quorum, timeout=10)
    zk.start(timeout=30)
    address = metastore.uri.removeprefix("thrift://")
    zk.ensure_path(f"/{NAMESPACE}")
    zk.create(f"/{NAMESPACE}/{address}", address.encode("utf-8"), ephemeral=True, sequence=True)
    yield NAMESPACE
    zk.stop()
    zk.close()


@pytest.fixture(scope="module")
def spark(registered: str, zookeeper: LocalZooKeeper, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    session = hw_spark.session(
        zookeeper=zookeeper.quorum,
        namespace=registered,
        master="local[1]",
        app_name="hivewire-test",
        conf={
            "spark.sql.warehouse.dir": str(warehouse),
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "1",
        },
    )
    yield session
    session.stop()


def test_spark_uses_the_discovered_metastore(
    spark: Any, metastore: LocalMetastore, unique: str, tmp_path: Path
) -> None:
    assert spark.sparkContext.getConf().get(hw_spark.METASTORE_URIS_CONF) == metastore.uri
    assert spark.conf.get("spark.sql.catalogImplementation") == "hive"
    location = (tmp_path / f"{unique}.db").as_uri()
    spark.sql(f"CREATE DATABASE {unique} LOCATION '{location}'")
    try:
        spark.sql(f"CREATE TABLE {unique}.sales (id INT, amount DOUBLE, dt STRING) USING parquet PARTITIONED BY (dt)")
        spark.sql(
            f"INSERT INTO {unique}.sales VALUES (1, 9.5, '2024-01-01'), (2, 3.0, '2024-01-02'), (3, 1.5, '2024-01-02')"
        )
        partitions = [r[0] for r in spark.sql(f"SHOW PARTITIONS {unique}.sales").collect()]
        assert partitions == ["dt=2024-01-01", "dt=2024-01-02"]
        assert spark.sql(f"SELECT sum(amount) FROM {unique}.sales").collect()[0][0] == 14.0
        # The metastore really holds them: ask it directly, not through Spark.
        with hw.MetastoreClient(metastore.uri, timeout=60) as client:
            assert client.get_partition_names(unique, "sales") == partitions
            assert client.get_table(unique, "sales").parameters.get("spark.sql.sources.provider") == "parquet"
    finally:
        spark.sql(f"DROP DATABASE IF EXISTS {unique} CASCADE")


def test_session_reuses_a_compatible_session_and_refuses_to_switch(
    spark: Any, zookeeper: LocalZooKeeper, registered: str, metastore: LocalMetastore
) -> None:
    # A notebook cell run twice gets the running session back.
    assert hw_spark.session(zookeeper=zookeeper.quorum, namespace=registered) is spark
    assert hw_spark.session(uris=[metastore.uri]) is spark
    # Pointing elsewhere cannot work on a running session: say so instead of returning it.
    with pytest.raises(hw.HivewireError) as exc:
        hw_spark.session(uris="thrift://127.0.0.1:1")
    assert "spark.stop()" in str(exc.value) and metastore.uri in str(exc.value)
    # Its Hive client is fixed too: the built-in one is 2.3's (2.3.10 in Spark 4), and not another release.
    assert hw_spark.session(uris=[metastore.uri], metastore_version="2.3.10") is spark
    with pytest.raises(hw.HivewireError) as exc:
        hw_spark.session(uris=[metastore.uri], metastore_version="3.1.3")
    assert "already running with Hive client 2.3" in str(exc.value) and "'3.1.3'" in str(exc.value)


def test_builder_sources(
    zookeeper: LocalZooKeeper, registered: str, metastore: LocalMetastore, unique: str, tmp_path: Path
) -> None:
    with pytest.raises(hw.DiscoveryError) as empty:
        hw_spark.builder(zookeeper=zookeeper.quorum, namespace=unique)
    assert f"/{unique}" in str(empty.value)
    with pytest.raises(hw.ConfigError) as both:
        hw_spark.builder(zookeeper=zookeeper.quorum, uris=metastore.uri)
    assert "exactly one" in str(both.value)
    site = tmp_path / "hive-site.xml"
    site.write_text(f"""<configuration>
  <property><name>metastore.thrift.uris</name><value>{zookeeper.quorum}</value></property>
  <property><name>metastore.service.discovery.mode</name><value>zookeeper</value></property>
  <property><name>metastore.zookeeper.namespace</name><value>{registered}</value></property>
</configuration>""")
    options = hw_spark.builder(hive_site=site, master="local[1]")._options
    assert options[hw_spark.METASTORE_URIS_CONF] == metastore.uri
    assert options["spark.sql.catalogImplementation"] == "hive"


def test_builder_takes_zookeeper_credentials_like_discovery(
    zookeeper: LocalZooKeeper, metastore: LocalMetastore, unique: str, tmp_path: Path
) -> None:
    """A namespace only an authenticated client may read: the same options as discover_metastores, or a
    DiscoveryConfig, reach ZooKeeper; nothing needs a running Spark (the builder is not started)."""
    address = metastore.uri.removeprefix("thrift://")
    zk = KazooClient(hosts=zookeeper.quorum, timeout=10, auth_data=[("digest", "reader:pw")])
    zk.start(timeout=30)
    try:
        acl = [make_digest_acl("reader", "pw", all=True)]
        zk.create(f"/{unique}", b"", acl=acl)
        zk.create(f"/{unique}/{address}", address.encode("utf-8"), acl=acl, ephemeral=True, sequence=True)
        with pytest.raises(hw.DiscoveryError) as anonymous:
            hw_spark.builder(zookeeper=zookeeper.quorum, namespace=unique)
        assert "credentials" in str(anonymous.value)

        options = hw_spark.builder(
            zookeeper=zookeeper.quorum, namespace=unique, auth_data=[("digest", "reader:pw")]
        )._options
        assert options[hw_spark.METASTORE_URIS_CONF] == metastore.uri
        config = DiscoveryConfig(quorum=zookeeper.quorum, namespace=unique, auth_data=(("digest", "reader:pw"),))
        assert hw_spark.builder(zookeeper=config)._options[hw_spark.METASTORE_URIS_CONF] == metastore.uri
        # A hive-site.xml cannot hold the password: the argument adds it to the site's settings.
        site = tmp_path / "hive-site.xml"
        site.write_text(f"""<configuration>
  <property><name>metastore.thrift.uris</name><value>{zookeeper.quorum}</value></property>
  <property><name>metastore.service.discovery.mode</name><value>zookeeper</value></property>
  <property><name>metastore.zookeeper.namespace</name><value>{unique}</value></property>
</configuration>""")
        options = hw_spark.builder(hive_site=site, auth_data=[("digest", "reader:pw")])._options
        assert options[hw_spark.METASTORE_URIS_CONF] == metastore.uri

        with pytest.raises(hw.ConfigError) as explicit:
            hw_spark.builder(uris=metastore.uri, auth_data=[("digest", "reader:pw")])
        assert "only with zookeeper=" in str(explicit.value)
        with pytest.raises(hw.ConfigError) as typo:
            hw_spark.builder(zookeeper=zookeeper.quorum, namespace=unique, auth=[("digest", "reader:pw")])
        assert "auth_data" in str(typo.value)
    finally:
        zk.delete(f"/{unique}", recursive=True)
        zk.stop()
        zk.close()
