"""``hivewire bridge --to-kafka``: publish the metastore's notification log to the Apiary topic."""

from __future__ import annotations

import logging

import click

from hivewire.config import _keys as keys
from hivewire.errors import ConfigError, HivewireError
from hivewire.tools._cli._options import Flag, kafka_flags, load, options, stop_on_signals, usage

FLAGS: tuple[Flag, ...] = (
    *kafka_flags(consumer=False),  # no consumer group: the bridge reads its own records back by partition
    Flag("--metastore-uris", keys.METASTORE_URIS, metavar="URIS"),
    Flag("--checkpoint", keys.NOTIFICATION_POSITION_FILE, metavar="FILE"),
    Flag("--start", keys.NOTIFICATION_START),
    Flag("--batch-size", keys.NOTIFICATION_BATCH_SIZE, metavar="N"),
    Flag("--poll-interval", keys.NOTIFICATION_POLL_INTERVAL, metavar="SECONDS"),
    Flag("--on-gap", keys.NOTIFICATION_ON_GAP),
    Flag("--producer-config", prefix=keys.BRIDGE_PRODUCER_PREFIX, short="-P", metavar="KEY=VALUE"),
    Flag(
        "--no-database-events",
        keys.BRIDGE_DATABASE_EVENTS,
        switch="false",
        help="Do not publish database events (for consumers that know only Apiary's seven types).",
    ),
)


@click.command()
@click.option("--to-kafka", is_flag=True, help="Publish to the Apiary topic (the one target so far).")
@click.option("--until-end", is_flag=True, help="Stop once the log is read to its end, instead of following it.")
@options(FLAGS)
def bridge(to_kafka: bool, until_end: bool, **params: object) -> None:
    """Publish the metastore's notification log to the Apiary topic as Apiary JSON, exactly once per event.

    Records are partitioned and keyed as the Apiary listener does it, so Drone Fly and hivewire apps consume
    a metastore with no Apiary listener and no shim. Runs until SIGTERM or SIGINT. See docs/sources.md.
    """
    if not to_kafka:
        raise click.UsageError("choose where to publish: --to-kafka")
    try:
        from hivewire.runtime._bridge import Bridge

        bridge = Bridge.from_config(load(FLAGS, params))
    except ConfigError as e:
        raise usage(e, FLAGS) from e
    except HivewireError as e:
        raise click.ClickException(str(e)) from e
    stop = stop_on_signals("hivewire.bridge", "stopping after the batch in flight")
    try:
        stats = bridge.run(stop, until_end=until_end)
    except HivewireError as e:
        raise click.ClickException(str(e)) from e
    logging.getLogger("hivewire.bridge").info(
        "published %d events up to event id %d (%d not Apiary's, %d already published, %d undecodable, "
        "%d missing from the log)",
        stats.published,
        stats.last_event_id,
        stats.skipped,
        stats.already_published,
        stats.undecodable,
        stats.missing,
    )
