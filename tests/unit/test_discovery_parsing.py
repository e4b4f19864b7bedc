"""Discovery without ZooKeeper: registration node names and data, Hive's configuration keys, hive-site.xml."""

from __future__ import annotations

from pathlib import Path

import pytest
from kazoo.security import OPEN_ACL_UNSAFE, Permissions, make_digest_acl_credential

import hivewire as hw
from hivewire.config._files import load_hive_site
from hivewire.metastore._acl import parse_acl
from hivewire.metastore._client_options import hive_client_options
from hivewire.metastore._discovery import discovery_mode, metastore_uris_from_conf
from hivewire.metastore._registrations import _to_uris, parse_registration
from hivewire.metastore._zookeeper import DiscoveryConfig


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        # Hive 4 (HiveMetaStore.startMetaStore): name host:port + 10-digit sequence, data host:port
        ("hms1.example.com:90830000000007", b"hms1.example.com:9083", "hms1.example.com:9083"),
        # data wins over the name (Hive's client reads only the data)
        ("anything0000000001", b"10.0.0.5:9084", "10.0.0.5:9084"),
        # empty data: the name, with the sequence glued to the port stripped
        ("hms1:90830000000012", b"", "hms1:9083"),
        ("hms1:190830000000012", None, "hms1:19083"),
        ("hms1:9083", b"  ", "hms1:9083"),  # a node made without the sequence flag
        # HiveServer2 style names, with plain or k=v data, or none
        ("serverUri=hs2:10000;version=4.0.0;sequence=0000000003", b"hs2:10000", "hs2:10000"),
        ("serverUri=hs2:10001;version=3.1.3;sequence=0000000004", b"", "hs2:10001"),
        (
            "serverUri=x:1;version=4.0.0;sequence=0000000005",
            b"hive.server2.thrift.bind.host=h;hive.server2.instance.uri=h:10002;hive.server2.transport.mode=binary",
            "h:10002",
        ),
        ("n0000000001", b"hive.server2.thrift.bind.host=h3;hive.server2.thrift.port=10003", "h3:10003"),
        # a thrift:// prefix and IPv6
        ("n", b"thrift://hms2:9083", "hms2:9083"),
        ("n", b"[::1]:9083", "[::1]:9083"),
        # unreadable data falls back to the name
        ("hms9:90830000000001", b"garbage", "hms9:9083"),
    ],
)
def test_parse_registration_forms(name: str, data: bytes | None, expected: str) -> None:
    assert parse_registration(name, data) == expected


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("lock-0000000001", b""),
        ("h:123456", b""),
        ("h:0000000001", b""),
        ("serverUri=;sequence=1", b""),
        ("h:99999", b"not an address"),
        ("x", b"h:70000"),
    ],
)
def test_parse_registration_rejects(name: str, data: bytes) -> None:
    # h:99999 names a valid-looking port but its data is unreadable and 99999 > 65535 anyway.
    assert parse_registration(name, data) is None


def test_to_uris_orders_by_sequence_dedupes_and_skips_junk() -> None:
    entries = [
        ("b:90830000000005", b"b:9083"),
        ("a:90830000000002", b"a:9083"),
        ("junk", b""),
        ("a:90830000000009", b"a:9083"),  # the same server registered twice
        ("serverUri=c:1;version=4;sequence=0000000003", b""),
    ]
    assert _to_uris(entries, "/ns") == ["thrift://a:9083", "thrift://c:1", "thrift://b:9083"]


def test_config_defaults_are_hives() -> None:
    c = DiscoveryConfig.from_conf(
        {"metastore.thrift.uris": "zk1,zk2:2182", "metastore.service.discovery.mode": "zookeeper"}
    )
    assert c.quorum == "zk1:2181,zk2:2182"
    assert (c.namespace, c.session_timeout, c.connection_timeout, c.max_retries, c.base_sleep) == (
        "hive_metastore",
        120.0,
        15.0,
        3,
        1.0,
    )
    assert (c.use_ssl, c.auth_data, c.path) == (False, (), "/hive_metastore")


def test_config_key_precedence_metastore_then_hive_metastore_zookeeper_then_hive_zookeeper() -> None:
    conf = {
        "hive.metastore.uris": "zk1",
        "hive.zookeeper.client.port": "3000",
        "hive.zookeeper.namespace": "from_hive_zookeeper",
        "hive.metastore.zookeeper.namespace": "from_hive_metastore_zookeeper",
        "hive.zookeeper.session.timeout": "600000",
        "hive.metastore.zookeeper.session.timeout": "30s",
        "metastore.zookeeper.session.timeout": "45000ms",
        "hive.zookeeper.connection.timeout": "2m",
        "hive.zookeeper.connection.max.retries": "7",
        "hive.metastore.zookeeper.connection.basesleeptime": "250",
    }
    c = DiscoveryConfig.from_conf(conf)
    assert c.quorum == "zk1:3000"
    assert c.namespace == "from_hive_metastore_zookeeper"
    assert c.session_timeout == 45.0  # metastore.* wins over both aliases
    assert c.connection_timeout == 120.0  # bare-unit values use the key's unit; "2m" is two minutes
    assert c.max_retries == 7
    assert c.base_sleep == 0.25  # basesleeptime's unit is milliseconds
    conf["metastore.zookeeper.namespace"] = "/winner/"
    conf["metastore.thrift.uris"] = "zkA:1,zkB"
    c2 = DiscoveryConfig.from_conf(conf)
    assert (c2.namespace, c2.quorum) == ("winner", "zkA:1,zkB:3000")


def test_blank_values_count_as_unset() -> None:
    c = DiscoveryConfig.from_conf(
        {"metastore.thrift.uris": "zk", "metastore.zookeeper.namespace": "  ", "hive.zookeeper.namespace": "ns2"}
    )
    assert c.namespace == "ns2"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("metastore.zookeeper.client.port", "abc"),
        ("metastore.zookeeper.client.port", "70000"),
        ("hive.zookeeper.session.timeout", "soon"),
        ("hive.metastore.zookeeper.connection.timeout", "0s"),
        ("metastore.zookeeper.connection.max.retries", "-1"),
        ("hive.zookeeper.ssl.client.enable", "yes"),
        ("hivewire.zookeeper.auth", "digest"),
        ("metastore.zookeeper.namespace", "a//b"),
    ],
)
def test_invalid_values_raise_config_error_naming_the_key(key: str, value: str) -> None:
    with pytest.raises(hw.ConfigError) as exc:
        DiscoveryConfig.from_conf({"metastore.thrift.uris": "zk1", key: value})
    assert exc.value.key == key
    assert key in str(exc.value)


def test_thrift_uris_in_zookeeper_mode_is_a_clear_error() -> None:
    with pytest.raises(hw.ConfigError) as exc:
        DiscoveryConfig.from_conf({"hive.metastore.uris": "thrift://zk1:2181"})
    assert exc.value.key == "hive.metastore.uris" and "host[:port]" in str(exc.value)
    with pytest.raises(hw.ConfigError) as missing:
        DiscoveryConfig.from_conf({"metastore.service.discovery.mode": "zookeeper"})
    assert missing.value.key == "metastore.thrift.uris"


def test_quorum_and_namespace_arguments_override_the_conf() -> None:
    c = DiscoveryConfig.from_conf({"hive.zookeeper.client.port": "2999"}, quorum="a,b:1", namespace="x")
    assert (c.quorum, c.namespace) == ("a:2999,b:1", "x")


def test_digest_auth_and_pem_tls_options(tmp_path: Path) -> None:
    pem = tmp_path / "client.pem"
    pem.write_text("not checked here")
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    c = DiscoveryConfig.from_conf(
        {
            "metastore.thrift.uris": "zk1",
            "hivewire.zookeeper.auth": "digest:alice:s3cr:et",
            "hive.zookeeper.ssl.client.enable": "true",
            "metastore.zookeeper.ssl.keystore.location": str(pem),
            "metastore.zookeeper.ssl.keystore.password": "kp",
            "metastore.zookeeper.ssl.keystore.type": "PEM",
            "hive.zookeeper.ssl.truststore.location": str(ca),
            "hivewire.zookeeper.ssl.verify": "false",
        }
    )
    assert c.auth_data == (("digest", "alice:s3cr:et"),)
    assert (c.use_ssl, c.certfile, c.keyfile, c.keyfile_password, c.ca, c.verify_certs) == (
        True,
        str(pem),
        str(pem),
        "kp",
        str(ca),
        False,
    )


def test_java_keystores_are_refused_with_advice(tmp_path: Path) -> None:
    with pytest.raises(hw.ConfigError) as exc:
        DiscoveryConfig.from_conf(
            {
                "metastore.thrift.uris": "zk1",
                "metastore.zookeeper.ssl.keystore.location": str(tmp_path / "ks.jks"),
                "metastore.zookeeper.ssl.keystore.type": "JKS",
            }
        )
    assert exc.value.key == "metastore.zookeeper.ssl.keystore.location" and "PEM" in str(exc.value)


def test_discovery_mode_and_plain_uris_need_no_zookeeper() -> None:
    assert discovery_mode({}) == ""
    assert discovery_mode({"hive.metastore.service.discovery.mode": "ZooKeeper"}) == "zookeeper"
    with pytest.raises(hw.ConfigError) as exc:
        discovery_mode({"metastore.service.discovery.mode": "consul"})
    assert exc.value.key == "metastore.service.discovery.mode"
    assert metastore_uris_from_conf({"hive.metastore.uris": "thrift://h1:9083,h2"}) == [
        "thrift://h1:9083",
        "thrift://h2:9083",
    ]
    assert metastore_uris_from_conf({"metastore.thrift.uris": "thrift://a:1", "hive.metastore.uris": "b"}) == [
        "thrift://a:1"
    ]
    with pytest.raises(hw.ConfigError) as none:
        metastore_uris_from_conf({})
    assert none.value.key == "metastore.thrift.uris"


def test_client_options_from_hive_keys() -> None:
    assert hive_client_options({}) == {}
    assert hive_client_options(
        {
            "hive.metastore.thrift.framed.transport.enabled": "true",
            "metastore.thrift.compact.protocol.enabled": "false",
            "hive.metastore.uri.selection": "SEQUENTIAL",
            "hive.metastore.client.socket.timeout": "600s",
        }
    ) == {"transport": "framed", "protocol": "binary", "selection": "sequential", "timeout": 600.0}
    with pytest.raises(hw.ConfigError) as exc:
        hive_client_options({"metastore.thrift.uri.selection": "ROUND_ROBIN"})
    assert exc.value.key == "metastore.thrift.uri.selection"


HIVE_SITE = """<?xml version="1.0"?>
<?xml-stylesheet type="text/xsl" href="configuration.xsl"?>
<configuration>
  <property>
    <name>zk.hosts</name>
    <value>zk1,zk2:2182</value>
    <description>used below through a variable</description>
  </property>
  <property><name>hive.metastore.uris</name><value>${zk.hosts}</value></property>
  <property><name>metastore.service.discovery.mode</name><value>zookeeper</value><final>true</final></property>
  <property><name>hive.zookeeper.namespace</name><value>hive_zookeeper_namespace_locks</value></property>
  <property><name>metastore.zookeeper.namespace</name><value>hms_${env.HIVEWIRE_TEST_SUFFIX}</value></property>
  <property><name>hive.zookeeper.client.port</name><value>2190</value></property>
</configuration>
"""


def test_hive_site_xml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVEWIRE_TEST_SUFFIX", "prod")
    site = tmp_path / "hive-site.xml"
    site.write_text(HIVE_SITE)
    props = load_hive_site(site)
    assert props["hive.metastore.uris"] == "zk1,zk2:2182"
    c = DiscoveryConfig.from_hive_site(site)
    # metastore.zookeeper.namespace wins over the lock manager's hive.zookeeper.namespace.
    assert (c.quorum, c.namespace) == ("zk1:2190,zk2:2182", "hms_prod")


def test_hive_site_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(hw.ConfigError) as missing:
        load_hive_site(tmp_path / "nope.xml")
    assert "nope.xml" in str(missing.value)
    bad = tmp_path / "bad.xml"
    bad.write_text("<configuration><property>")
    with pytest.raises(hw.ConfigError) as broken:
        DiscoveryConfig.from_hive_site(bad)
    assert "bad.xml" in str(broken.value) and "XML" in str(broken.value)


def test_acl_parsing() -> None:
    assert parse_acl(None) == (list(OPEN_ACL_UNSAFE), [])
    acls, auth = parse_acl(["world:anyone:r", "digest:bob:pw:cdrwa"])
    assert [(a.id.scheme, a.id.id, a.perms) for a in acls] == [
        ("world", "anyone", Permissions.READ),
        ("digest", make_digest_acl_credential("bob", "pw"), Permissions.ALL),
    ]
    assert auth == [("digest", "bob:pw")]
    ip_acls, ip_auth = parse_acl("ip:10.0.0.0/8:rw")
    assert (ip_acls[0].id.id, ip_acls[0].perms, ip_auth) == ("10.0.0.0/8", Permissions.READ | Permissions.WRITE, [])


@pytest.mark.parametrize(
    "bad", ["world:anyone", "world:anyone:rx", "digest:nopassword:cdrwa", "world:bob:r", "world:anyone:r"]
)
def test_acl_errors(bad: str) -> None:
    # The last one is well-formed but would lock the sidecar out of creating and deleting its own node.
    with pytest.raises(hw.ConfigError) as exc:
        parse_acl(bad)
    assert exc.value.key == "acl"
