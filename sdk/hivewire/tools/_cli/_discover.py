"""``hivewire discover``: the metastores registered in ZooKeeper."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from hivewire.errors import HivewireError

if TYPE_CHECKING:
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
def discover(quorum: str | None, namespace: str | None, hive_site: str | None, as_json: bool) -> None:
    """Print the metastores registered in ZooKeeper (HIVE-20794), one thrift:// URI per line."""
    import json

    from hivewire.metastore._discovery import discover_metastores

    try:
        uris = discover_metastores(_discovery_config(quorum, namespace, hive_site))
    except HivewireError as e:
        raise click.ClickException(str(e)) from e
    click.echo(json.dumps(uris) if as_json else "\n".join(uris))


def _discovery_config(quorum: str | None, namespace: str | None, hive_site: str | None) -> DiscoveryConfig:
    """The ZooKeeper settings of --zookeeper/--namespace, or of a hive-site.xml (flags win)."""
    from hivewire.metastore._zookeeper import DiscoveryConfig

    config = DiscoveryConfig.from_parts(quorum, namespace, hive_site)
    if config is None:
        raise click.UsageError("give --zookeeper QUORUM or --hive-site FILE")
    return config
