"""``hivewire listener pause|resume``: switch a listener off and on in every instance of an app, live."""

from __future__ import annotations

import difflib

import click

from hivewire.coordination._state import AppState
from hivewire.tools._cli import _coordination
from hivewire.tools._cli._options import options


@click.group()
def listener() -> None:
    """Switch a listener off and on in every running instance of an app, without a restart."""


def _check_known(state: AppState, name: str) -> None:
    # With live instances the listener's name can be checked; without any, the switch waits for them.
    running = sorted({n for i in state.instances().values() for n in i.listeners})
    if running and name not in running:
        close = difflib.get_close_matches(name, running, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise click.UsageError(f"no live instance of {state.app} runs a listener {name!r}{hint} (they run: "
                               f"{', '.join(running)})")  # fmt: skip


@listener.command()
@click.argument("app")
@click.argument("name", metavar="LISTENER")
@options(_coordination.FLAGS)
def pause(app: str, name: str, **params: object) -> None:
    """Pause LISTENER in every instance of APP; it keeps its place and resumes where it stopped."""
    with _coordination.app_state(app, params) as state:
        _check_known(state, name)
        _coordination.refuse_singleton(state, name, "paused")
        state.pause(name, by=_coordination.who())
    click.echo(f"{app}: {name} paused")


@listener.command()
@click.argument("app")
@click.argument("name", metavar="LISTENER")
@options(_coordination.FLAGS)
def resume(app: str, name: str, **params: object) -> None:
    """Resume LISTENER in every instance of APP, from where it stopped."""
    with _coordination.app_state(app, params) as state:
        state.resume(name, by=_coordination.who())
    click.echo(f"{app}: {name} running")
