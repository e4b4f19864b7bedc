"""``hivewire sideline start|resume|resolve|list``: park one listener's events for a database or table, replay
them later, then resolve."""

from __future__ import annotations

import json

import click
import msgspec

from hivewire.tools._cli import _coordination
from hivewire.tools._cli._options import options


@click.group()
def sideline() -> None:
    """Park a listener's events for some databases or tables now, and replay exactly those later.

    start: skip them from now on; resume: replay the skipped ones alongside the live stream; resolve: stop
    skipping (the sideline is finished when the replay reaches that point). docs/coordination.md has an example.
    """


def _event_types(values: tuple[str, ...]) -> tuple[str, ...]:
    from hivewire.events import EventType

    known = {t.value for t in EventType}
    types = tuple(v.strip().upper() for v in values)
    unknown = [t for t in types if t not in known]
    if unknown:
        raise click.BadParameter(
            f"{', '.join(unknown)}: not an event type (the types: {', '.join(sorted(known))})", param_hint="--type"
        )
    return types


@sideline.command()
@click.argument("app")
@click.option("--listener", "name", required=True, metavar="LISTENER", help="The listener whose events to park.")
@click.option("--db", required=True, metavar="PATTERN", help="Databases to park (`*` and `?` as in @app.on).")
@click.option("--table", default="*", show_default=True, metavar="PATTERN", help="Tables to park.")
@click.option(
    "--type", "types", multiple=True, metavar="TYPE", help="Event types to park, such as ADD_PARTITION (repeatable)."
)
@options(_coordination.FLAGS)
def start(app: str, name: str, db: str, table: str, types: tuple[str, ...], **params: object) -> None:
    """Make LISTENER of APP skip the matching events from now on, remembering where skipping began."""
    event_types = _event_types(types)
    with _coordination.app_state(app, params) as state:
        _coordination.refuse_singleton(state, name, "sidelined")
        created = state.start_sideline(name, db, table, event_types)
    click.echo(f"{app}: sideline {created.id} started: {name} skips {created.describe()}")


@sideline.command()
@click.argument("app")
@click.argument("sideline_id", metavar="ID")
@options(_coordination.FLAGS)
def resume(app: str, sideline_id: str, **params: object) -> None:
    """Replay the events sideline ID skipped, alongside the live stream (which keeps skipping them)."""
    with _coordination.app_state(app, params) as state:
        moved = state.resume_sideline(sideline_id)
    click.echo(f"{app}: sideline {moved.id} resumed: replaying {moved.describe()} for {moved.listener}")


@sideline.command()
@click.argument("app")
@click.argument("sideline_id", metavar="ID")
@options(_coordination.FLAGS)
def resolve(app: str, sideline_id: str, **params: object) -> None:
    """Stop skipping for sideline ID; it is finished when the replay reaches where skipping stopped."""
    with _coordination.app_state(app, params) as state:
        moved = state.resolve_sideline(sideline_id)
    click.echo(f"{app}: sideline {moved.id} resolved: {moved.listener} no longer skips {moved.describe()}")


@sideline.command(name="list")
@click.argument("app")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list (for scripts).")
@options(_coordination.FLAGS)
def list_(app: str, as_json: bool, **params: object) -> None:
    """List APP's sidelines, oldest first, with their state and offsets."""
    with _coordination.app_state(app, params) as state:
        found = state.sidelines()
    if as_json:
        click.echo(json.dumps([{**msgspec.to_builtins(s), "finished": s.finished} for s in found], indent=2))
        return
    if not found:
        click.echo(f"{app}: no sidelines")
    for s in found:
        done = " (finished)" if s.finished else ""
        starts = ",".join(f"{p}@{o}" for p, o in sorted(s.starts.items())) or "-"
        click.echo(f"{s.id}  {s.listener}  {s.describe()}  {s.state}{done}  starts {starts}")
