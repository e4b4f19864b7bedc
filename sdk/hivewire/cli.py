"""The ``hivewire`` command line. Each command is a thin layer over a library function."""

from __future__ import annotations

import logging
import sys

import click

import hivewire


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(hivewire.__version__, prog_name="hivewire")
@click.option("--log-level", default="INFO", show_default=True,
              type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
              help="Level of hivewire's log output (on stderr).")
def main(log_level: str) -> None:
    """hivewire: Python functions as Hive Metastore event listeners, and an event-publishing HMS shim."""
    logging.basicConfig(level=log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


@main.command()
def demo() -> None:
    """Start a local metastore, make changes, and print what a listener receives. Needs Java 17+."""
    from hivewire.demo import run_demo

    try:
        run_demo(echo=click.echo)
    except hivewire.HivewireError as e:
        raise click.ClickException(str(e)) from e


@main.command()
@click.option("--zookeeper", "quorum", metavar="QUORUM",
              help="ZooKeeper ensemble, such as zk1:2181,zk2:2181 (default: the quorum in --hive-site).")
@click.option("--namespace", default=None, help="Parent znode of the registrations  [default: hive_metastore]")
@click.option("--hive-site", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A hive-site.xml with metastore.service.discovery.mode=zookeeper (quorum, namespace, TLS).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of one URI per line.")
def discover(quorum: str | None, namespace: str | None, hive_site: str | None, as_json: bool) -> None:
    """Print the metastores registered in ZooKeeper (HIVE-20794), one thrift:// URI per line."""
    import json

    from hivewire.discovery import DiscoveryConfig, discover_metastores

    try:
        if hive_site is not None:
            config = DiscoveryConfig.from_hive_site(hive_site, quorum=quorum, namespace=namespace)
        elif quorum is not None:
            config = DiscoveryConfig(quorum=quorum, namespace=namespace or "hive_metastore")
        else:
            raise click.UsageError("give --zookeeper QUORUM or --hive-site FILE")
        uris = discover_metastores(config)
    except hivewire.HivewireError as e:
        raise click.ClickException(str(e)) from e
    click.echo(json.dumps(uris) if as_json else "\n".join(uris))


@main.command()
@click.option("--metastore", required=True, metavar="HOST:PORT",
              help="The metastore to register; written to ZooKeeper as is, so clients must reach this address.")
@click.option("--zookeeper", "quorum", metavar="QUORUM",
              help="ZooKeeper ensemble, such as zk1:2181,zk2:2181 (default: the quorum in --hive-site).")
@click.option("--namespace", default=None, help="Parent znode of the registrations  [default: hive_metastore]")
@click.option("--acl", "acls", multiple=True, metavar="SCHEME:ID:PERMS",
              help="ACL of the nodes, such as world:anyone:r and digest:user:password:cdrwa (repeatable). "
                   "Default: open, like Hive.")
@click.option("--interval", default=5.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="Seconds between health checks (fb303 getStatus and get_all_databases).")
@click.option("--hive-site", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A hive-site.xml for the ZooKeeper settings (quorum, namespace, timeouts, TLS).")
def register(metastore: str, quorum: str | None, namespace: str | None, acls: tuple[str, ...], interval: float,
             hive_site: str | None) -> None:
    """Register an existing metastore in ZooKeeper the way Hive 4 does, while it passes health checks.

    Runs until SIGTERM or SIGINT, then withdraws its node and exits.
    """
    import signal
    import threading

    from hivewire.discovery import DiscoveryConfig
    from hivewire.registration import Registration

    try:
        if hive_site is not None:
            config = DiscoveryConfig.from_hive_site(hive_site, quorum=quorum, namespace=namespace)
        elif quorum is not None:
            config = DiscoveryConfig(quorum=quorum, namespace=namespace or "hive_metastore")
        else:
            raise click.UsageError("give --zookeeper QUORUM or --hive-site FILE")
        registration = Registration(metastore, config, acl=list(acls) or None, interval=interval)
    except hivewire.HivewireError as e:
        raise click.ClickException(str(e)) from e
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        logging.getLogger("hivewire.registration").info("%s: stopping", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    registration.run(stop)
