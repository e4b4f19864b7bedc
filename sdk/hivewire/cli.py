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
@click.argument("target", required=False, metavar="[MODULE:APP]")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="A .properties or .toml file.")
@click.option("--bootstrap-servers", help="Kafka bootstrap servers (apiary.bootstrap.servers).")
@click.option("--topic", help="The Apiary topic (apiary.kafka.topic.name).")
@click.option("--instance-name", help="Names the consumer group (instance.name).")
@click.option("--endpoint-port", type=int, help="Port of /metrics and /health, 0 for none (endpoint.port).")
@click.option("--listener", "listeners", multiple=True, metavar="PKG.MODULE:NAME",
              help="Add a listener by import path (repeatable; like apiary.listener.list).")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE", help="Any setting (repeatable).")
def run(target: str | None, config_file: str | None, bootstrap_servers: str | None, topic: str | None,
        instance_name: str | None, endpoint_port: int | None, listeners: tuple[str, ...],
        settings: tuple[str, ...]) -> None:
    """Run an App's listeners on the Apiary topic until SIGTERM/SIGINT.

    MODULE:APP names an App object (``listeners:app``; the current directory is importable). Without it,
    the listeners come from apiary.listener.list, as in Drone Fly. Settings come from --config, environment
    variables (APIARY_BOOTSTRAP_SERVERS, ...) and flags, in increasing precedence.
    """
    import os

    from hivewire.app import App
    from hivewire.config import Config
    from hivewire.listener import load_object

    overrides: dict[str, str] = {}
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--set")
        overrides[key.strip()] = value
    flags: dict[str, object] = {"apiary.bootstrap.servers": bootstrap_servers, "apiary.kafka.topic.name": topic,
                                "instance.name": instance_name, "endpoint.port": endpoint_port}
    overrides.update({key: str(value) for key, value in flags.items() if value is not None})
    try:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        if target:
            app = load_object(target if ":" in target else f"{target}:app")
            if callable(app) and not isinstance(app, App):
                app = app()  # an app factory
            if not isinstance(app, App):
                raise click.ClickException(f"{target} is a {type(app).__name__}, not a hivewire.App")
        else:
            app = None
        config = Config.load(base=app.config if app else None, file=config_file, overrides=overrides)
        if listeners:
            known = [p for p in config.get("apiary.listener.list", "").split(",") if p.strip()]
            config = config.merged({"apiary.listener.list": ",".join([*known, *listeners])})
        if app is None:
            app = App(config.get("instance.name", "drone-fly"))
        app.run(config=config)
    except hivewire.HivewireError as e:
        raise click.ClickException(str(e)) from e


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
