"""The ``hivewire`` command line. Each command is a thin layer over a library function."""

from __future__ import annotations

import logging
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any, cast

import click

from hivewire._version import __version__
from hivewire.errors import HivewireError

if TYPE_CHECKING:
    from hivewire_shim.spool import FsyncPolicy


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="hivewire")
@click.option(
    "--log-level",
    default="INFO",
    show_default=True,
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
    help="Level of hivewire's log output (on stderr).",
)
def main(log_level: str) -> None:
    """hivewire: Python functions as Hive Metastore event listeners, and an event-publishing HMS shim."""
    logging.basicConfig(
        level=log_level.upper(), stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )


@main.command()
@click.argument("target", required=False, metavar="[MODULE:APP]")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="A .properties or .toml file.")
@click.option("--bootstrap-servers", help="Kafka bootstrap servers (apiary.bootstrap.servers).")
@click.option("--topic", help="The Apiary topic (apiary.kafka.topic.name).")
@click.option("--instance-name", help="Names the consumer group (instance.name).")
@click.option("--endpoint-port", type=int, help="Port of /metrics and /health, 0 for none (endpoint.port).")
@click.option(
    "--listener",
    "listeners",
    multiple=True,
    metavar="PKG.MODULE:NAME",
    help="Add a listener by import path (repeatable; like apiary.listener.list).",
)
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE", help="Any setting (repeatable).")
def run(
    target: str | None,
    config_file: str | None,
    bootstrap_servers: str | None,
    topic: str | None,
    instance_name: str | None,
    endpoint_port: int | None,
    listeners: tuple[str, ...],
    settings: tuple[str, ...],
) -> None:
    """Run an App's listeners on the Apiary topic until SIGTERM/SIGINT.

    MODULE:APP names an App object (``listeners:app``; the current directory is importable). Without it,
    the listeners come from apiary.listener.list, as in Drone Fly. Settings come from --config, environment
    variables (APIARY_BOOTSTRAP_SERVERS, ...) and flags, in increasing precedence.
    """
    import os

    from hivewire.config._config import Config
    from hivewire.runtime._app import App
    from hivewire.runtime._listener import load_object

    overrides = _key_values("--set", settings)
    flags: dict[str, object] = {
        "apiary.bootstrap.servers": bootstrap_servers,
        "apiary.kafka.topic.name": topic,
        "instance.name": instance_name,
        "endpoint.port": endpoint_port,
    }
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
    except HivewireError as e:
        raise click.ClickException(str(e)) from e


@main.command()
def demo() -> None:
    """Start a local metastore, make changes, and print what a listener receives. Needs Java 17+."""
    from hivewire.tools._demo import run_demo

    try:
        run_demo(echo=click.echo)
    except HivewireError as e:
        raise click.ClickException(str(e)) from e


@main.command()
@click.option("--upstream", metavar="URIS", help="The metastore(s) to front: thrift://h1:9083,thrift://h2:9083.")
@click.option(
    "--upstream-zookeeper",
    metavar="QUORUM",
    help="Discover the upstream metastores in this ZooKeeper instead (HIVE-20794).",
)
@click.option(
    "--upstream-namespace",
    default=None,
    help="Namespace of the upstream registrations.  [default: --upstream-hive-site's, else hive_metastore]",
)
@click.option(
    "--upstream-hive-site",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="A hive-site.xml for discovering the upstream: quorum, namespace, digest auth "
    "(hivewire.zookeeper.auth), TLS; --upstream-zookeeper/--upstream-namespace win.",
)
@click.option("--port", default=9083, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
@click.option("--bind", default="0.0.0.0", show_default=True, help="Address to listen on.")
@click.option(
    "--advertise", metavar="HOST:PORT", help="Address registered in ZooKeeper.  [default: this host's name and --port]"
)
@click.option("--framed", is_flag=True, help="The upstream uses the framed transport (clients may use either).")
@click.option("--kafka-bootstrap-servers", metavar="HOST:PORT,...", help="Publish Apiary JSON to this Kafka.")
@click.option("--topic", help="The Apiary topic (with --kafka-bootstrap-servers).")
@click.option(
    "--spool-dir",
    default="hivewire-shim-spool",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Where events wait for Kafka (kept across restarts; one shim per directory).",
)
@click.option(
    "--spool-fsync",
    default="interval",
    show_default=True,
    type=click.Choice(["always", "interval", "never"]),
    help="When spooled events are fsync'ed: before each call returns, every 0.2 s, or never.",
)
@click.option(
    "--producer-property",
    "producer_properties",
    multiple=True,
    metavar="KEY=VALUE",
    help="A librdkafka producer setting, such as security.protocol=SSL (repeatable).",
)
@click.option(
    "--partition-by-old-name",
    is_flag=True,
    help="Partition table renames by the old name (Apiary 8.1.15) instead of the new one.",
)
@click.option("--zookeeper", metavar="QUORUM", help="Register the shim in this ZooKeeper (HIVE-20794 format).")
@click.option(
    "--namespace", default=None, help="Namespace to register in.  [default: --hive-site's, else hive_metastore]"
)
@click.option(
    "--hive-site",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="A hive-site.xml for registering the shim: quorum, namespace, digest auth "
    "(hivewire.zookeeper.auth), TLS; --zookeeper/--namespace win.",
)
@click.option("--hive-version", default=None, help="The hive.version events carry.  [default: 2.3.10]")
@click.option("--publish-failures", is_flag=True, help="Also publish status=false events for failed changes.")
@click.option(
    "--no-database-events",
    is_flag=True,
    help="Do not publish database events (for consumers that know only Apiary's seven types).",
)
@click.option(
    "--timeout",
    default=600.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds to wait for the upstream's reply to a call.",
)
@click.option(
    "--client-send-timeout",
    default=600.0,
    show_default=True,
    type=click.FloatRange(min=0),
    help="Disconnect a client that takes nothing of a reply for this many seconds (0: never).",
)
@click.option(
    "--read-timeout",
    default=10.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds each of the shim's own reads (the old object before a change, the stored one after) "
    "may take; past it the event carries what the request did.",
)
@click.option(
    "--max-message-size",
    default=100 * 1024 * 1024,
    show_default=True,
    type=click.IntRange(min=1024),
    metavar="BYTES",
    help="Largest client request accepted, in bytes (Hive's "
    "hive.metastore.server.max.message.size); a bigger one closes that connection.",
)
def shim(
    upstream: str | None,
    upstream_zookeeper: str | None,
    upstream_namespace: str | None,
    upstream_hive_site: str | None,
    port: int,
    bind: str,
    advertise: str | None,
    framed: bool,
    kafka_bootstrap_servers: str | None,
    topic: str | None,
    spool_dir: str,
    spool_fsync: str,
    producer_properties: tuple[str, ...],
    partition_by_old_name: bool,
    zookeeper: str | None,
    namespace: str | None,
    hive_site: str | None,
    hive_version: str | None,
    publish_failures: bool,
    no_database_events: bool,
    timeout: float,
    client_send_timeout: float,
    read_timeout: float,
    max_message_size: int,
) -> None:
    """Front a Hive Metastore: relay every call, publish an event for every change. Runs until SIGTERM/SIGINT."""
    from hivewire_shim import DEFAULT_HIVE_VERSION, KafkaSink, Shim

    discovered = upstream_zookeeper is not None or upstream_hive_site is not None
    if (upstream is None) == (not discovered):
        raise click.UsageError(
            "give exactly one of --upstream URIS and --upstream-zookeeper QUORUM (or --upstream-hive-site FILE)"
        )
    if (kafka_bootstrap_servers is None) != (topic is None):
        raise click.UsageError("--kafka-bootstrap-servers and --topic go together")
    try:
        target: Any = upstream
        registration: Any = None
        if zookeeper is not None or hive_site is not None:
            registration = _discovery_config(zookeeper, namespace, hive_site)
        if discovered:
            from hivewire.metastore._discovery import ZooKeeperResolver

            target = ZooKeeperResolver(_discovery_config(upstream_zookeeper, upstream_namespace, upstream_hive_site))
        sinks: list[Any] = []
        if kafka_bootstrap_servers is not None and topic is not None:
            sinks.append(
                KafkaSink(
                    kafka_bootstrap_servers,
                    topic,
                    spool_dir,
                    producer_config=_key_values("--producer-property", producer_properties),
                    alter_by_old_name=partition_by_old_name,
                    fsync=cast("FsyncPolicy", spool_fsync),
                )
            )
        else:
            logging.getLogger("hivewire_shim").warning(
                "no --kafka-bootstrap-servers/--topic: the shim relays calls but publishes no events"
            )
        server = Shim(
            target,
            host=bind,
            port=port,
            framed=framed,
            sinks=sinks,
            hive_version=hive_version or DEFAULT_HIVE_VERSION,
            publish_failures=publish_failures,
            database_events=not no_database_events,
            timeout=timeout,
            zookeeper=registration,
            advertise=advertise,
            client_send_timeout=client_send_timeout,
            read_timeout=read_timeout,
            max_message_bytes=max_message_size,
        )
        server.start()
    except (HivewireError, OSError) as e:
        if discovered and target is not None and hasattr(target, "close"):
            target.close()
        raise click.ClickException(str(e)) from e
    stop = _stop_on_signals("hivewire_shim", "stopping")
    click.echo(f"hivewire shim serving on {server.uri}", err=True)
    try:
        server.serve_forever(stop)
    finally:
        if discovered:
            target.close()  # end the discovery session, or its reconnecting threads outlive the command


@main.command("replay-rejected")
@click.option(
    "--spool-dir",
    required=True,
    type=click.Path(file_okay=False, exists=True),
    help="The shim's --spool-dir. Stop the shim that uses it first.",
)
def replay_rejected(spool_dir: str) -> None:
    """Put the events Kafka refused for good (the spool's 'rejected' file) back into the shim's spool.

    Raise the size limit that made Kafka refuse them first; the shim sends them when it starts next,
    after what its spool already holds. See docs/shim.md.
    """
    from hivewire_shim import replay_rejected as replay

    try:
        count = replay(spool_dir)
    except (HivewireError, OSError) as e:
        raise click.ClickException(str(e)) from e
    click.echo(f"{count} rejected event(s) are back in {spool_dir}; start the shim to send them")


@main.command()
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


@main.command()
@click.option(
    "--metastore",
    required=True,
    metavar="HOST:PORT",
    help="The metastore to register; written to ZooKeeper as is, so clients must reach this address.",
)
@click.option(
    "--zookeeper",
    "quorum",
    metavar="QUORUM",
    help="ZooKeeper ensemble, such as zk1:2181,zk2:2181 (default: the quorum in --hive-site).",
)
@click.option("--namespace", default=None, help="Parent znode of the registrations  [default: hive_metastore]")
@click.option(
    "--acl",
    "acls",
    multiple=True,
    metavar="SCHEME:ID:PERMS",
    help="ACL of the nodes, such as world:anyone:r and digest:user:password:cdrwa (repeatable). "
    "Default: open, like Hive.",
)
@click.option(
    "--interval",
    default=5.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds between health checks (fb303 getStatus and get_all_databases).",
)
@click.option(
    "--check-timeout",
    default=None,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds one health check may take, connecting included; less than --interval.  [default: half of --interval]",
)
@click.option(
    "--hive-site",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="A hive-site.xml for the ZooKeeper settings (quorum, namespace, timeouts, TLS).",
)
def register(
    metastore: str,
    quorum: str | None,
    namespace: str | None,
    acls: tuple[str, ...],
    interval: float,
    check_timeout: float | None,
    hive_site: str | None,
) -> None:
    """Register an existing metastore in ZooKeeper the way Hive 4 does, while it passes health checks.

    Runs until SIGTERM or SIGINT, then withdraws its node and exits.
    """
    from hivewire.metastore._registration import Registration

    try:
        registration = Registration(
            metastore,
            _discovery_config(quorum, namespace, hive_site),
            acl=list(acls) or None,
            interval=interval,
            check_timeout=check_timeout,
        )
    except HivewireError as e:
        raise click.ClickException(str(e)) from e
    registration.run(_stop_on_signals("hivewire.registration", "stopping"))


def _discovery_config(quorum: str | None, namespace: str | None, hive_site: str | None) -> Any:
    """The ZooKeeper settings of --zookeeper/--namespace, or of a hive-site.xml (flags win)."""
    from hivewire.metastore._discovery import DiscoveryConfig

    if hive_site is not None:
        return DiscoveryConfig.from_hive_site(hive_site, quorum=quorum, namespace=namespace)
    if quorum is not None:
        return DiscoveryConfig(quorum=quorum, namespace=namespace or "hive_metastore")
    raise click.UsageError("give --zookeeper QUORUM or --hive-site FILE")


def _stop_on_signals(logger: str, doing: str) -> threading.Event:
    """An event set by SIGTERM or SIGINT, for commands that run until stopped."""
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        logging.getLogger(logger).info("%s: %s", signal.Signals(signum).name, doing)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return stop


def _key_values(option: str, values: tuple[str, ...]) -> dict[str, str]:
    """Repeated ``KEY=VALUE`` options as a dict (later ones win)."""
    out = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint=option)
        out[key.strip()] = value
    return out


@main.command()
@click.option("--bootstrap-servers", required=True, metavar="HOST:PORT,...", help="Kafka bootstrap servers.")
@click.option("--topic", required=True, help="The Apiary topic to archive.")
@click.option(
    "--table",
    "table_uri",
    required=True,
    metavar="PATH",
    help="The Delta table: a path or a URI (s3://, abfss://, ...); created when missing.",
)
@click.option(
    "--app-id",
    default=None,
    help="Job name in the table's app transactions (the key of the offsets stored in the table); the "
    "same for every process of one job.  [default: the topic]",
)
@click.option(
    "--group-id",
    default=None,
    help="Kafka consumer group.  [default: hivewire-archive-<app id>-<the Delta table's id>]",
)
@click.option(
    "--flush-events",
    default=10_000,
    show_default=True,
    type=click.IntRange(min=1),
    help="Write when this many messages are buffered.",
)
@click.option(
    "--flush-seconds",
    default=10.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Write when the oldest buffered message is this old (the latency bound).",
)
@click.option(
    "-X",
    "--consumer-config",
    "consumer_config",
    multiple=True,
    metavar="KEY=VALUE",
    help="A librdkafka consumer setting, such as security.protocol=SSL (repeatable).",
)
@click.option(
    "--storage-option",
    "storage_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="A deltalake storage option, such as AWS_REGION=eu-west-1 (repeatable).",
)
def archive(
    bootstrap_servers: str,
    topic: str,
    table_uri: str,
    app_id: str | None,
    group_id: str | None,
    flush_events: int,
    flush_seconds: float,
    consumer_config: tuple[str, ...],
    storage_options: tuple[str, ...],
) -> None:
    """Stream the topic's events into a Delta table, exactly once (the offsets ride in the Delta commits).

    Runs until SIGTERM or SIGINT, then writes what it holds and exits. Start several with the same
    --app-id to share the partitions. See docs/data.md.
    """
    from hivewire.runtime._kafka import KafkaSource

    try:
        from hivewire.data._archive import Archiver

        archiver = Archiver(
            KafkaSource(bootstrap_servers, topic, consumer_config=_key_values("--consumer-config", consumer_config)),
            table_uri,
            app_id=app_id,
            group_id=group_id,
            flush_events=flush_events,
            flush_seconds=flush_seconds,
            storage_options=_key_values("--storage-option", storage_options) or None,
        )
    except HivewireError as e:
        raise click.ClickException(str(e)) from e
    stop = _stop_on_signals("hivewire.archive", "flushing and stopping")
    try:
        stats = archiver.run(stop)
    except HivewireError as e:
        raise click.ClickException(str(e)) from e
    logging.getLogger("hivewire.archive").info(
        "archived %d rows in %d commits (%d undecodable, %d already in the table, %d conflicts)",
        stats.rows_written,
        stats.commits,
        stats.undecodable,
        stats.skipped,
        stats.conflicts,
    )
