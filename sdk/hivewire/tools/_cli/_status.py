"""``hivewire status``: an app's live instances, its listeners' states and its sidelines."""

from __future__ import annotations

import datetime
import json

import click

from hivewire.tools._cli import _coordination
from hivewire.tools._cli._options import options


def _when(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")


@click.command()
@click.argument("app")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (for scripts).")
@options(_coordination.FLAGS)
def status(app: str, as_json: bool, **params: object) -> None:
    """Show APP's live instances, each listener's state (running, paused, sidelined, singleton) and its sidelines."""
    from hivewire.coordination._status import app_status

    with _coordination.app_state(app, params) as state:
        found = app_status(state)
    if as_json:
        click.echo(json.dumps(found.to_builtins(), indent=2, sort_keys=True))
        return
    click.echo(f"app {found.app}: {len(found.instances)} live instance(s)")
    for member, i in found.instances.items():
        click.echo(
            f"  {member}  {i.host} pid {i.pid}  hivewire {i.version}  since {_when(i.started_at)}  "
            f"partitions {','.join(i.partitions) or '-'}" + (f"  singletons {','.join(i.leading)}" if i.leading else "")
        )
    click.echo("listeners:" if found.listeners else "listeners: none known")
    for name, listener in found.listeners.items():
        parts: list[str] = [listener.state]
        if listener.switch is not None and listener.state == "paused":
            parts.append(f"(since {_when(listener.switch.changed_at)} by {listener.switch.by or '?'})")
        if listener.singleton_on:
            parts.append(f"singleton on {listener.singleton_on}")
        else:
            parts.append(f"on {len(listener.instances)} instance(s)")
        if listener.sidelined:
            parts.append(f"sidelined ({', '.join(listener.sidelined)})")
        if listener.lag is not None:
            parts.append(f"lag {listener.lag}")
        click.echo(f"  {name}  " + "  ".join(parts))
    if found.sidelines:
        click.echo("sidelines:")
        for s in found.sidelines:
            done = " (finished)" if s.finished else ""
            click.echo(f"  {s.id}  {s.listener}  {s.describe()}  {s.state}{done}")
