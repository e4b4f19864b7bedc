"""The shim's configuration: it refuses to relay to itself or to other shims in a loop, counts the methods
clients call without growing on junk, and the ``hivewire shim`` command passes its settings through."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import hivewire.metastore._discovery as patched_module
import hivewire_shim
from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.errors import ConfigError, HivewireError
from hivewire.metastore._zookeeper import DiscoveryConfig
from hivewire.tools._cli import main
from hivewire_shim import Shim, ShimOptions, Upstream
from hivewire_shim.server import UNKNOWN_METHOD
from hivewire_shim.wire import DEFAULT_MAX_MESSAGE_BYTES


class Discovered:
    """Stands in for hivewire.metastore._discovery.ZooKeeperResolver (which connects to ZooKeeper when made)."""

    def __init__(self, quorum: str, namespace: str) -> None:
        self.config = DiscoveryConfig(quorum=quorum, namespace=namespace)

    def uris(self) -> list[str]:
        return ["thrift://hms1:9083"]

    def refresh(self) -> list[str]:
        return self.uris()


@pytest.mark.parametrize("registered", ["zk1:2181", "ZK2,zk1:2181", DiscoveryConfig("zk1", "elsewhere")])
def test_registering_where_the_upstream_is_discovered_is_refused(registered: str | DiscoveryConfig) -> None:
    resolver = Discovered("zk1:2181,zk2:2181", "hive_metastore")
    with pytest.raises(ConfigError, match=r"/hive_metastore .*in a loop.*--namespace.*--upstream-namespace"):
        Shim(resolver, zookeeper=registered, namespace="hive_metastore")
    with pytest.raises(ConfigError, match="in a loop"):  # also through an Upstream made by the caller
        Shim(Upstream(resolver), zookeeper=registered, namespace="hive_metastore")


@pytest.mark.parametrize(
    ("quorum", "namespace"),
    [("zk1:2181", "hivewire_shim"), ("zk9:2181", "hive_metastore"), ("zk1:2181/other", "hive_metastore")],
)
def test_another_namespace_or_ensemble_is_fine(quorum: str, namespace: str) -> None:
    shim = Shim(Discovered("zk1:2181,zk2:2181", "hive_metastore"), zookeeper=quorum, namespace=namespace)
    assert shim.namespace == namespace
    shim.lookup.close()


def test_method_names_nobody_knows_are_counted_in_one_bucket() -> None:
    shim = Shim("thrift://hms1:9083")
    for i in range(1000):
        shim._count(f"junk{i}", False)  # a client sending garbage names: "Invalid method name" for each
    shim._count("get_table", False)  # in our IDL, whatever the upstream said
    shim._count("get_table_objects_by_name_req", True)  # not in our IDL, but the upstream answered it
    assert shim.calls == {UNKNOWN_METHOD: 1000, "get_table": 1, "get_table_objects_by_name_req": 1}
    shim.lookup.close()


def test_a_request_is_limited_to_hives_100_mb_by_default() -> None:
    assert DEFAULT_MAX_MESSAGE_BYTES == 104_857_600  # hive.metastore.server.max.message.size
    assert Shim("thrift://hms1:9083").max_message_bytes == DEFAULT_MAX_MESSAGE_BYTES
    with pytest.raises(ConfigError, match="too small"):
        Shim("thrift://hms1:9083", max_message_bytes=10)


def hive_site(path: Path, **properties: str) -> str:
    path.write_text(
        "<configuration>"
        + "".join(f"<property><name>{k}</name><value>{v}</value></property>" for k, v in properties.items())
        + "</configuration>"
    )
    return str(path)


def test_the_shim_command_passes_zookeeper_credentials_limits_and_timeouts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}

    class Resolver:
        def __init__(self, config: DiscoveryConfig) -> None:
            seen["discovery"] = config

        def close(self) -> None:
            seen["closed"] = True

    class StartsNot:
        def __init__(self, target: Any, **kwargs: Any) -> None:
            seen.update(kwargs, target=target)

        def start(self) -> None:
            raise HivewireError("not started in this test")

    monkeypatch.setattr(patched_module, "ZooKeeperResolver", Resolver)
    monkeypatch.setattr(hivewire_shim, "Shim", StartsNot)
    upstream = hive_site(
        tmp_path / "upstream.xml",
        **{
            "metastore.thrift.uris": "zk1:2181",
            "metastore.zookeeper.namespace": "hms",
            "hivewire.zookeeper.auth": "digest:reader:pw",
        },
    )
    registration = hive_site(
        tmp_path / "registration.xml",
        **{"metastore.thrift.uris": "zk2:2181", "hivewire.zookeeper.auth": "digest:writer:pw"},
    )
    result = CliRunner().invoke(
        main,
        [
            "shim",
            "--upstream-hive-site",
            upstream,
            "--hive-site",
            registration,
            "--namespace",
            "shims",
            "--read-timeout",
            "3",
            "--max-message-size",
            "2048",
        ],
    )
    assert result.exit_code == 1 and "not started in this test" in result.output
    assert seen["target"] is not None and seen["closed"]
    assert (seen["discovery"].quorum, seen["discovery"].namespace) == ("zk1:2181", "hms")
    assert seen["discovery"].auth_data == (("digest", "reader:pw"),)
    options = seen["options"]
    assert (options.zookeeper.quorum, options.zookeeper.namespace) == ("zk2:2181", "shims")
    assert options.zookeeper.auth_data == (("digest", "writer:pw"),)
    assert (options.read_timeout, options.max_message_bytes, options.host) == (3.0, 2048, "0.0.0.0")


def test_the_shim_command_wants_exactly_one_upstream(tmp_path: Path) -> None:
    site = hive_site(tmp_path / "site.xml", **{"metastore.thrift.uris": "zk1:2181"})
    for args in ([], ["--upstream", "thrift://hms:9083", "--upstream-hive-site", site]):
        result = CliRunner().invoke(main, ["shim", *args])
        assert result.exit_code == 2 and "exactly one of --upstream" in result.output


def test_the_shims_options_take_their_defaults_from_the_key_declarations() -> None:
    # One declaration per setting: a field set by a key defaults to the key's default, but for where an
    # embedded shim listens (locally, on a free port; the command: every address, 9083).
    keyed = [f for f in dataclasses.fields(ShimOptions) if "key" in f.metadata]
    assert len(keyed) >= 15
    declared = Config({})
    for f in keyed:
        value = declared.optional(f.metadata["key"])
        expected = {"host": "127.0.0.1", "port": 0, "health_port": None}.get(f.name, value)
        assert getattr(ShimOptions(), f.name) == expected, f.name
    assert (declared.read(keys.SHIM_BIND), declared.read(keys.SHIM_PORT)) == ("0.0.0.0", 9083)


def test_shim_keywords_and_options_are_one_set_of_settings() -> None:
    shim = Shim("thrift://hms1:9083", options=ShimOptions(read_timeout=2.5, port=9999), read_timeout=4)
    try:
        assert shim.options == ShimOptions(read_timeout=4, port=9999)  # the keyword wins over options
        assert (shim.read_timeout, shim.lookup.timeout, shim.options.port) == (4, 4, 9999)
    finally:
        shim.lookup.close()
    with pytest.raises(ConfigError, match=r"read_timeout.*more than zero"):
        ShimOptions(read_timeout=0)
    with pytest.raises(ConfigError) as exc:
        Shim("thrift://hms1:9083", port="9084")
    assert exc.value.key == "port" and "'9084' is not a int" in str(exc.value)
    with pytest.raises(ConfigError, match="framed"):
        Shim("thrift://hms1:9083", framed=1)  # a flag is True or False, not a number
    with pytest.raises(TypeError, match=r"unexpected keyword argument.*prot"):
        Shim("thrift://hms1:9083", prot=9084)
