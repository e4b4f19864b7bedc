"""``hivewire archive``: stream the topic's events into a Delta table, exactly once."""

from __future__ import annotations

import logging
from dataclasses import replace

import click

from hivewire.config import _keys as keys
from hivewire.errors import ConfigError, HivewireError
from hivewire.tools._cli._options import Flag, kafka_flags, load, options, stop_on_signals, usage


def _old_spellings(flag: Flag) -> Flag:
    """Earlier releases spelled --group and -X as --group-id and --consumer-config."""
    old = {"--group": ("--group-id",), "--kafka-property": ("--consumer-config",)}
    return replace(flag, aliases=old.get(flag.option, ()))


FLAGS: tuple[Flag, ...] = (
    *(_old_spellings(flag) for flag in kafka_flags(group=keys.ARCHIVE_GROUP_ID)),
    Flag("--table", keys.ARCHIVE_TABLE, metavar="PATH"),
    Flag("--app-id", keys.ARCHIVE_APP_ID),
    Flag("--flush-events", keys.ARCHIVE_FLUSH_EVENTS, metavar="N"),
    Flag("--flush-seconds", keys.ARCHIVE_FLUSH_INTERVAL, metavar="SECONDS"),
    Flag("--storage-option", prefix=keys.ARCHIVE_STORAGE_PREFIX, metavar="KEY=VALUE"),
)


@click.command()
@options(FLAGS)
def archive(**params: object) -> None:
    """Stream the topic's events into a Delta table, exactly once (the offsets ride in the Delta commits).

    Runs until SIGTERM or SIGINT, then writes what it holds and exits. Start several with the same
    --app-id to share the partitions. See docs/data.md.
    """
    try:
        from hivewire.data._archive import Archiver, ArchiveSettings

        archiver = Archiver.from_settings(ArchiveSettings.from_config(load(FLAGS, params)))
    except ConfigError as e:
        raise usage(e, FLAGS) from e
    except HivewireError as e:
        raise click.ClickException(str(e)) from e
    stop = stop_on_signals("hivewire.archive", "flushing and stopping")
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
