"""``hivewire discover``: the metastores registered in ZooKeeper."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from hivewire.config import _keys as keys
from hivewire.errors import ConfigError, HivewireError
from hivewire.tools._cli._options import load, options, usage

if TYPE_CHECKING:
    from hivewire.config._config import Config
    from hivewire.metastore._zookeeper import DiscoveryConfig


@click.command()
@click.option(
    "--zookeeper",
    "quorum",
    metavar="QUORUM",
    help="ZooKeeper ensemble, such as zk1:2181,zk2:2181 (default: the quorum in --hive-site).",
)
@click.option("--namespace", default=None, help="Parent znode of the registrations  [default: hive_metastore]")
@click.option(
    "--hive-site",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="A hive-site.xml with metastore.service.discovery.mode=zookeeper (quorum, namespace, TLS).",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of one URI per line.")
@options(())
def discover(quorum: str | None, namespace: str | None, hive_site: str | None, as_json: bool, **params: object) -> None:
    """Print the metastores registered in ZooKeeper (HIVE-20794), one thrift:// URI per line.

    --config/--set take Hive's keys (metastore.thrift.uris holds the quorum in ZooKeeper mode) and hivewire's
    ZooKeeper client keys (hivewire.zookeeper.auth, TLS); the flags win."""
    import json

    from hivewire.metastore._discovery import discover_metastores

    try:
        config = load((), params)
        found = _discovery_config(quorum, namespace, hive_site, config)
    except ConfigError as e:
        raise usage(e, ()) from e
    try:
        uris = discover_metastores(found)
    except HivewireError as e:
        raise click.ClickException(str(e)) from e
    click.echo(json.dumps(uris) if as_json else "\n".join(uris))


def _discovery_config(
    quorum: str | None, namespace: str | None, hive_site: str | None, config: Config
) -> DiscoveryConfig:
    """The ZooKeeper settings of --zookeeper/--namespace, of a hive-site.xml, or of the configuration (flags
    win)."""
    from hivewire.metastore._zookeeper import DiscoveryConfig

    if quorum is None and hive_site is None and config.find(keys.METASTORE_URIS) is not None:
        return DiscoveryConfig.from_conf(config, namespace=namespace)
    found = DiscoveryConfig.from_parts(quorum, namespace, hive_site, config)
    if found is None:
        raise click.UsageError("give --zookeeper QUORUM, --hive-site FILE or metastore.thrift.uris in --config")
    return found
