"""``hivewire tail``: print the topic's events as they arrive (a ``kcat`` for Apiary)."""

from __future__ import annotations

from datetime import datetime, timezone

import click

from hivewire.config import _keys as keys
from hivewire.errors import ConfigError, HivewireError
from hivewire.tools._cli._options import Flag, kafka_flags, load, options, stop_on_signals, usage

# No --group: tail joins no group and commits nothing.
FLAGS: tuple[Flag, ...] = tuple(f for f in kafka_flags() if f.option != "--group")


@click.command()
@click.option(
    "--type", "types", multiple=True, metavar="EVENT_TYPE", help="Only this type (repeatable): ALTER_TABLE, ..."
)
@click.option(
    "--db", "databases", multiple=True, metavar="PATTERN", help="Only databases matching (repeatable; sales_*)."
)
@click.option("--table", "tables", multiple=True, metavar="PATTERN", help="Only tables matching, by name or db.table.")
@click.option("--json", "as_json", is_flag=True, help="Print each message's Apiary JSON, one per line.")
@click.option("-e", "--exit", "exit_at_end", is_flag=True, help="Stop at the end of the topic instead of waiting.")
@click.option("-n", "--max-events", type=click.IntRange(1), default=None, help="Stop after printing this many.")
@options(FLAGS)
def tail(
    types: tuple[str, ...],
    databases: tuple[str, ...],
    tables: tuple[str, ...],
    as_json: bool,
    exit_at_end: bool,
    max_events: int | None,
    **params: object,
) -> None:
    """Print the topic's events as they arrive, one line each, until SIGINT (or -e, -n).

    Starts at the end of the topic (--from-beginning: its oldest retained event). Joins no consumer group
    and commits nothing: running listeners are not affected. Messages that do not decode are reported on
    stderr and skipped.
    """
    from hivewire.tools._tail import Filter
    from hivewire.tools._tail import tail as read

    try:
        config = load(FLAGS, params)
        bootstrap_servers, topic = config.read(keys.BOOTSTRAP_SERVERS), config.read(keys.TOPIC)
        wanted = Filter.of(types, databases, tables)
    except ConfigError as e:
        raise usage(e, FLAGS) from e
    stop = stop_on_signals("hivewire.tail", "stopping")
    printed = 0
    try:
        for record in read(
            bootstrap_servers,
            topic,
            consumer_config=config.with_prefix(keys.CONSUMER_PREFIX.name),
            exit_at_end=exit_at_end,
            stop=stop,
        ):
            if record.event is None:
                click.echo(f"{record.origin}: not an Apiary event: {record.error}", err=True)
                continue
            if not wanted(record.event):
                continue
            click.echo(record.value.decode("utf-8", "replace") if as_json else _line(record.event))
            printed += 1
            if max_events is not None and printed >= max_events:
                break
    except HivewireError as e:
        raise click.ClickException(str(e)) from e


def _line(event: object) -> str:
    """``2024-05-01T10:00:00Z apiary/0@17 ALTER_TABLE sales.orders  location=...; columns added=...``"""
    from hivewire.events._model import ListenerEvent

    assert isinstance(event, ListenerEvent)
    origin = event.origin
    when = (
        datetime.fromtimestamp(origin.timestamp / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        if origin is not None and origin.timestamp
        else "-"
    )
    facts = "; ".join(
        f"{k}={', '.join(map(str, v)) if isinstance(v, list) else v}" for k, v in event._summary().items()
    )
    return f"{when} {origin or '-'} {event.event_type.value:<16} {event.qualified_name}  {facts}".rstrip()
