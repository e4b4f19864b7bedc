"""``hivewire shim`` (front a metastore and publish its changes) and ``hivewire replay-rejected``."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

import click

from hivewire.config import _keys as keys
from hivewire.errors import ConfigError, HivewireError
from hivewire.tools._cli._options import Flag, kafka_flags, load, options, stop_on_signals, usage

if TYPE_CHECKING:
    from hivewire_shim import Shim


def _old_spellings(flag: Flag) -> Flag:
    """Earlier releases spelled --bootstrap-servers and -X as --kafka-bootstrap-servers and --producer-property."""
    old = {"--bootstrap-servers": ("--kafka-bootstrap-servers",), "--kafka-property": ("--producer-property",)}
    return replace(flag, aliases=old.get(flag.option, ()))


FLAGS: tuple[Flag, ...] = (
    Flag("--upstream", keys.SHIM_UPSTREAM, metavar="URIS"),
    Flag("--upstream-zookeeper", keys.SHIM_UPSTREAM_ZOOKEEPER, metavar="QUORUM"),
    Flag("--upstream-namespace", keys.SHIM_UPSTREAM_NAMESPACE),
    Flag("--upstream-hive-site", keys.SHIM_UPSTREAM_HIVE_SITE, metavar="FILE"),
    Flag("--port", keys.SHIM_PORT),
    Flag("--bind", keys.SHIM_BIND),
    Flag("--advertise", keys.SHIM_ADVERTISE, metavar="HOST:PORT"),
    Flag("--framed", keys.SHIM_FRAMED, switch="true"),
    *(_old_spellings(flag) for flag in kafka_flags(prefix=keys.SHIM_PRODUCER_PREFIX, consumer=False)),
    Flag("--spool-dir", keys.SHIM_SPOOL_DIR, metavar="DIR"),
    Flag("--spool-fsync", keys.SHIM_SPOOL_FSYNC),
    Flag("--partition-by-old-name", keys.SHIM_PARTITION_BY_OLD_NAME, switch="true"),
    Flag("--zookeeper", keys.SHIM_ZOOKEEPER, metavar="QUORUM"),
    Flag("--namespace", keys.SHIM_NAMESPACE),
    Flag("--hive-site", keys.SHIM_HIVE_SITE, metavar="FILE"),
    Flag("--hive-version", keys.SHIM_HIVE_VERSION),
    Flag("--publish-failures", keys.SHIM_PUBLISH_FAILURES, switch="true"),
    Flag(
        "--no-database-events",
        keys.SHIM_DATABASE_EVENTS,
        switch="false",
        help="Do not publish database events (for consumers that know only Apiary's seven types).",
    ),
    Flag("--timeout", keys.SHIM_TIMEOUT, metavar="SECONDS"),
    Flag("--connect-timeout", keys.SHIM_CONNECT_TIMEOUT, metavar="SECONDS"),
    Flag("--client-send-timeout", keys.SHIM_CLIENT_SEND_TIMEOUT, metavar="SECONDS"),
    Flag("--read-timeout", keys.SHIM_READ_TIMEOUT, metavar="SECONDS"),
    Flag("--max-message-size", keys.SHIM_MAX_MESSAGE_SIZE, metavar="BYTES"),
    Flag("--max-connections", keys.SHIM_MAX_CONNECTIONS),
    Flag("--lookup-connections", keys.SHIM_LOOKUP_CONNECTIONS),
    Flag("--max-buffered-bytes", keys.SHIM_MAX_BUFFERED, metavar="BYTES"),
    Flag("--health-port", keys.SHIM_HEALTH_PORT),
    Flag("--health-bind", keys.SHIM_HEALTH_HOST),
    Flag("--ssl-certfile", keys.SHIM_SSL_CERTFILE, metavar="PEM"),
    Flag("--ssl-keyfile", keys.SHIM_SSL_KEYFILE, metavar="PEM"),
    Flag("--ssl-ca", keys.SHIM_SSL_CA, metavar="PEM"),
    Flag("--upstream-ssl", keys.SHIM_UPSTREAM_SSL, switch="true"),
    Flag("--upstream-ssl-ca", keys.SHIM_UPSTREAM_SSL_CA, metavar="PEM"),
    Flag("--upstream-ssl-certfile", keys.SHIM_UPSTREAM_SSL_CERTFILE, metavar="PEM"),
    Flag("--upstream-ssl-keyfile", keys.SHIM_UPSTREAM_SSL_KEYFILE, metavar="PEM"),
    Flag("--upstream-sasl-mechanism", keys.METASTORE_SASL_MECHANISM),
    Flag("--upstream-sasl-username", keys.METASTORE_SASL_USERNAME, metavar="USER"),
    Flag(
        "--upstream-sasl-password",
        keys.METASTORE_SASL_PASSWORD,
        metavar="SECRET",
        help="The SASL password: file:PATH or env:NAME (a literal value is readable by local users in /proc).",
    ),
    Flag("--upstream-kerberos-principal", keys.METASTORE_KERBEROS_PRINCIPAL, metavar="PRINCIPAL"),
)


@click.command()
@options(FLAGS)
def shim(**params: object) -> None:
    """Front a Hive Metastore: relay every call, publish an event for every change. Runs until SIGTERM/SIGINT.

    Give the metastores (--upstream) or where to discover them (--upstream-zookeeper or --upstream-hive-site);
    with --bootstrap-servers and --topic, changes are published as Apiary events.
    """
    from hivewire_shim import Shim, ShimSettings

    try:
        settings = ShimSettings.from_config(load(FLAGS, params))
    except ConfigError as e:
        raise usage(e, FLAGS) from e
    target = None
    try:
        target = settings.open_upstream()
        sinks = settings.sinks()
        if not sinks:
            logging.getLogger("hivewire_shim").warning(
                "no --bootstrap-servers/--topic: the shim relays calls but publishes no events"
            )
        server = Shim(target, sinks=sinks, options=settings.options)
        server.start()
    except (HivewireError, OSError) as e:
        if target is not None and not isinstance(target, str):
            target.close()
        raise (usage(e, FLAGS) if isinstance(e, ConfigError) else click.ClickException(str(e))) from e
    stop = stop_on_signals("hivewire_shim", "stopping")
    _check_upstream(server)
    click.echo(f"hivewire shim serving on {server.uri}", err=True)
    try:
        server.serve_forever(stop)
    finally:
        if not isinstance(target, str):
            target.close()  # end the discovery session, or its reconnecting threads outlive the command


def _check_upstream(server: Shim) -> None:
    """Say at start whether the upstream metastore answers (the shim serves either way, and relays calls once
    one does): a dead upstream is otherwise found only at the first client's call."""
    from hivewire_shim.upstream import UpstreamUnavailable

    log = logging.getLogger("hivewire_shim")
    try:
        sock, uri = server.upstream.connect()
    except UpstreamUnavailable as e:
        # The upstream's reachability said it (WARNING, with what to check): this only adds what it means.
        log.info("at start: %s; serving anyway, clients' calls fail until it answers (--upstream)", e)
        return
    sock.close()
    log.info("at start: the upstream metastore %s accepts connections", uri)


@click.command("replay-rejected")
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
