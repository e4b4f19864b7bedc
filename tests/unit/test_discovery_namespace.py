"""Where the discovery namespace came from: named in errors, warned about when it is the lock manager's key."""

from __future__ import annotations

import logging

import pytest

import hivewire as hw
from hivewire.metastore._discovery import _nothing_registered
from hivewire.metastore._zookeeper import DiscoveryConfig, discovery_config

QUORUM = {"metastore.thrift.uris": "zk1:2181"}


def message(config: DiscoveryConfig) -> str:
    return str(_nothing_registered(config, "no registration under it"))


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_namespace_from_the_lock_manager_key_is_named_and_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="hivewire.discovery"):
        config = DiscoveryConfig.from_conf({**QUORUM, "hive.zookeeper.namespace": "hive_zookeeper_namespace_locks"})
    assert (config.namespace, config.namespace_key) == ("hive_zookeeper_namespace_locks", "hive.zookeeper.namespace")
    [warning] = warnings(caplog)
    assert "hive.zookeeper.namespace" in warning and "lock manager" in warning
    assert "set metastore.zookeeper.namespace" in warning
    text = message(config)
    assert "hive.zookeeper.namespace=hive_zookeeper_namespace_locks" in text
    assert "metastore.zookeeper.namespace=" not in text  # the key it did NOT come from
    assert "set metastore.zookeeper.namespace" in text


@pytest.mark.parametrize("key", ["metastore.zookeeper.namespace", "hive.metastore.zookeeper.namespace"])
def test_namespace_from_a_metastore_key_is_named_without_warning(key: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="hivewire.discovery"):
        config = DiscoveryConfig.from_conf({**QUORUM, key: "hms_prod", "hive.zookeeper.namespace": "locks"})
    assert (config.namespace, config.namespace_key) == ("hms_prod", key)
    assert warnings(caplog) == []
    text = message(config)
    assert f"({key}=hms_prod)" in text and "locks" not in text


def test_namespace_given_directly_or_defaulted_names_no_configuration_key() -> None:
    assert "the default namespace, 'hive_metastore'" in message(DiscoveryConfig(quorum="zk1"))
    assert "the namespace given, 'other'" in message(DiscoveryConfig(quorum="zk1", namespace="other"))
    # A namespace argument overrides the configuration, and the message then no longer blames its key.
    config = DiscoveryConfig.from_conf({**QUORUM, "hive.zookeeper.namespace": "locks"}, namespace="arg")
    assert config.namespace_key is None and "hive.zookeeper" not in message(config)
    from_conf = DiscoveryConfig.from_conf({**QUORUM, "hive.zookeeper.namespace": "locks"})
    replaced = discovery_config(from_conf, "arg")
    assert (replaced.namespace, replaced.namespace_key) == ("arg", None)


def test_the_key_does_not_split_shared_resolvers() -> None:
    # Two configurations reaching the same namespace are equal (one shared resolver, one ZooKeeper session).
    a = DiscoveryConfig.from_conf({**QUORUM, "metastore.zookeeper.namespace": "ns"})
    b = DiscoveryConfig(quorum="zk1:2181", namespace="ns")
    assert a == b and hash(a) == hash(b) and a.namespace_key != b.namespace_key


def test_discovery_config_takes_a_quorum_or_a_config_plus_options() -> None:
    base = discovery_config("zk1,zk2:2182", auth_data=[("digest", "u:p")], session_timeout=30)
    assert (base.quorum, base.namespace, base.auth_data, base.session_timeout) == (
        "zk1:2181,zk2:2182",
        "hive_metastore",
        (("digest", "u:p"),),
        30,
    )
    assert discovery_config(base) is base
    tls = discovery_config(base, "ns", use_ssl=True, verify_certs=False)
    assert (tls.namespace, tls.use_ssl, tls.verify_certs, tls.auth_data) == ("ns", True, False, base.auth_data)
    with pytest.raises(hw.ConfigError) as unknown:
        discovery_config("zk1", auth=[("digest", "u:p")])
    assert "auth" in str(unknown.value) and "auth_data" in str(unknown.value)
    with pytest.raises(hw.ConfigError, match="quorum"):
        discovery_config(base, quorum="zk9")
    with pytest.raises(hw.ConfigError, match="DiscoveryConfig"):
        discovery_config(["zk1"])  # type: ignore[arg-type]
