"""``hivewire dlq replay``: send dead letters back through the listener that gave up on them."""

from __future__ import annotations

import shlex
import sys

import click

from hivewire.config import _keys as keys
from hivewire.errors import ConfigError, HivewireError
from hivewire.tools._cli._options import Flag, Group, kafka_flags, load, options, usage
from hivewire.tools._cli._run import load_app

FLAGS: tuple[Flag, ...] = (
    *(f for f in kafka_flags() if f.option not in ("--group", "--from-beginning")),
    Flag("--dlq-topic", keys.DEAD_LETTER_TOPIC),
)


@click.group(cls=Group)
def dlq() -> None:
    """Dead letters: the messages listeners gave up on (docs/runtime.md, "Dead letters")."""


@dlq.command()
@click.argument("target", metavar="MODULE:APP")
@click.option("--listener", "listeners", multiple=True, metavar="PATTERN", help="Only letters of these listeners.")
@click.option("--error", "errors", multiple=True, metavar="TEXT", help="Only letters whose error contains TEXT.")
@click.option("--type", "types", multiple=True, metavar="EVENT_TYPE", help="Only this event type (repeatable).")
@click.option("--db", "databases", multiple=True, metavar="PATTERN", help="Only databases matching (sales_*).")
@click.option("--table", "tables", multiple=True, metavar="PATTERN", help="Only tables matching, by name or db.table.")
@click.option("--from-offset", type=click.IntRange(0), default=0, help="Skip letters before this offset.")
@click.option(
    "--source",
    "sources",
    multiple=True,
    metavar="PARTITION[@OFFSET]",
    help="Only letters whose source record is on this partition of the topic (from OFFSET on). Repeatable.",
)
@click.option("--again", is_flag=True, help="Also replay letters already replayed (the record says when).")
@click.option("--dry-run", is_flag=True, help="List the letters that would be replayed; call nothing.")
@options(FLAGS)
def replay(
    target: str,
    listeners: tuple[str, ...],
    errors: tuple[str, ...],
    types: tuple[str, ...],
    databases: tuple[str, ...],
    tables: tuple[str, ...],
    from_offset: int,
    sources: tuple[str, ...],
    again: bool,
    dry_run: bool,
    **params: object,
) -> None:
    """Call, for each dead letter, the app's listener that gave up on it (once, no retries), and report.

    Reads the dead-letter topic (hivewire.dead.letter.topic, default <topic>.dlq) from its start to its end
    now, joining no group. Each replay is recorded in <dead-letter topic>.replays (which letter, when, the
    result); a letter replayed before is skipped unless --again. Letters that fail again stay where they are
    and are tried again next time; the exit status is 1 if any failed.
    """
    from hivewire.tools._deadletters import ReplayLog, Selection
    from hivewire.tools._deadletters import replay as replay_letters
    from hivewire.tools._tail import Filter, NoSuchTopic, tail

    try:
        app = load_app(target)
        config = load(FLAGS, params, base=app.config)
        bootstrap_servers = config.read(keys.BOOTSTRAP_SERVERS)
        topic = config.optional(keys.DEAD_LETTER_TOPIC) or f"{config.read(keys.TOPIC)}.dlq"
        selection = Selection(
            listeners, errors, Filter.of(types, databases, tables), from_offset, tuple(map(_source, sources))
        )
    except ConfigError as e:
        raise usage(e, FLAGS) from e
    counts = {"replayed": 0, "failed": 0, "skipped": 0, "selected": 0}
    consumer_config = config.with_prefix(keys.CONSUMER_PREFIX.name)
    letters = tail(bootstrap_servers, topic, consumer_config=consumer_config, from_beginning=True, exit_at_end=True)
    record = ReplayLog(bootstrap_servers, topic, consumer_config)
    try:
        replayed = {} if again else record.replayed()
        for outcome in replay_letters(app, letters, selection, config=config, dry_run=dry_run, replayed=replayed):
            counts[outcome.result] += 1
            if outcome.result in ("replayed", "failed"):
                record.record(outcome)
            event = outcome.record.event
            where = f"{outcome.record.origin} {event.event_type.value if event else '-'} "
            where += f"{event.qualified_name if event else '-'} -> {outcome.listener or '?'}"
            click.echo(f"{outcome.result:<8} {where}" + (f": {outcome.detail}" if outcome.detail else ""))
            if outcome.traceback:
                click.echo(outcome.traceback.rstrip(), err=True)
    except NoSuchTopic:
        click.echo(f"{topic} does not exist: nothing was dead-lettered there", err=True)
        return
    except HivewireError as e:
        raise click.ClickException(str(e)) from e
    finally:
        for listener in app.listeners:
            listener.close()
    try:
        record.close()
    except HivewireError as e:
        raise click.ClickException(str(e)) from e
    if not any(counts.values()):  # said beside the counts: 0 replayed, 0 failed alone reads as success
        given = _typed(
            ("--listener", listeners), ("--error", errors), ("--type", types), ("--db", databases),
            ("--table", tables), ("--source", sources), ("--from-offset", (str(from_offset),) if from_offset else ()),
        )  # fmt: skip
        click.echo(f"no dead letter matched {given} in {topic}" if given else f"no dead letter in {topic}", err=True)
    summary = ", ".join(f"{n} {what}" for what, n in counts.items() if n or what in ("replayed", "failed"))
    recorded = f"; recorded in {record.topic}" if counts["replayed"] or counts["failed"] else ""
    click.echo(f"{topic}: {summary}{recorded}", err=True)
    if counts["failed"]:
        sys.exit(1)


def _typed(*options: tuple[str, tuple[str, ...]]) -> str:
    """The filter options as typed (``--listener sync --table 'sales.*'``), for "no dead letter matched"."""
    return " ".join(f"{option} {shlex.quote(value)}" for option, values in options for value in values)


def _source(text: str) -> tuple[int, int]:
    """``--source PARTITION[@OFFSET]`` as (partition, offset)."""
    partition, _, offset = text.partition("@")
    try:
        return int(partition), int(offset or 0)
    except ValueError:
        raise ConfigError("--source", f"expected PARTITION or PARTITION@OFFSET (3@1200), got {text!r}") from None
