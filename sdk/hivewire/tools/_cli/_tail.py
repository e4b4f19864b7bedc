"""``hivewire tail``: print the topic's events as they arrive (a ``kcat`` for Apiary)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import click

from hivewire.config import _keys as keys
from hivewire.errors import ConfigError, HivewireError
from hivewire.tools._cli._options import Flag, kafka_flags, load, options, stop_on_signals, usage

if TYPE_CHECKING:
    from hivewire.tools._tail import Record

# No --group: tail joins no group and commits nothing (so --from-beginning has no group offset to defer to).
FLAGS: tuple[Flag, ...] = tuple(
    replace(f, help="Start from each partition's oldest retained message instead of its end.")
    if f.option == "--from-beginning"
    else f
    for f in kafka_flags()
    if f.option != "--group"
)
#: The dead-letter headers the text line shows (docs/runtime.md lists them all; --json prints them all).
_SHOWN = (("hivewire.listener", "listener"), ("hivewire.attempts", "attempts"), ("hivewire.error", "error"))
_REPLAY_SHOWN = (("hivewire.listener", "listener"), ("hivewire.replay.result", "result"), ("hivewire.replay.at", "at"))


@click.command()
@click.option(
    "--type", "types", multiple=True, metavar="EVENT_TYPE", help="Only this type (repeatable): ALTER_TABLE, ..."
)
@click.option(
    "--db", "databases", multiple=True, metavar="PATTERN", help="Only databases matching (repeatable; sales_*)."
)
@click.option("--table", "tables", multiple=True, metavar="PATTERN", help="Only tables matching, by name or db.table.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print each message's Apiary JSON, one per line; a message with headers (a dead letter) as "
    '{"headers": {...}, "message": <Apiary JSON>}.',
)
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

    Starts at the end of the topic (--from-beginning: its oldest retained event) and says on stderr when it
    has reached the end. Joins no consumer group and commits nothing: running listeners are not affected.
    Messages that do not decode are reported on stderr and skipped. A dead letter's line ends with its
    listener, attempts and error (--json: all its headers).
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
            click.echo(_json(record) if as_json else _line(record.event) + _headers(record.headers))
            printed += 1
            if max_events is not None and printed >= max_events:
                break
    except HivewireError as e:
        raise click.ClickException(str(e)) from e


def _json(record: Record) -> str:
    """The Apiary JSON as published, or with headers an object holding both (the message kept verbatim)."""
    text = record.value.decode("utf-8", "replace")
    if not record.headers:
        return text
    return f'{{"headers": {json.dumps(dict(record.headers), ensure_ascii=False)}, "message": {text}}}'


def _headers(headers: Mapping[str, str]) -> str:
    """A dead letter's listener, attempts and error, after its line (``  [listener=sync attempts=5 error=...]``);
    a replay record's (``<dlq>.replays``) listener, result and when, and the error only when it failed again
    (the letter's own error is what a replay that worked put right: not shown beside ``result=replayed``)."""
    result = headers.get("hivewire.replay.result")
    if result:
        shown = [f"{name}={headers[key]}" for key, name in _REPLAY_SHOWN if headers.get(key)]
        if result == "failed" and headers.get("hivewire.replay.detail"):
            shown.append(f"error={headers['hivewire.replay.detail']}")
    else:
        shown = [f"{name}={headers[key]}" for key, name in _SHOWN if headers.get(key)]
    return f"  [{' '.join(shown)}]" if shown else ""


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
