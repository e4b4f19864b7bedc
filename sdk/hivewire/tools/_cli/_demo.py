"""``hivewire demo``: the whole chain on local services, in one command."""

from __future__ import annotations

import click

from hivewire.errors import HivewireError


@click.command()
def demo() -> None:
    """Start a local metastore, make changes, and print what a listener receives. Needs Java 17+."""
    from hivewire.tools._demo import run_demo

    try:
        run_demo(echo=click.echo)
    except HivewireError as e:
        raise click.ClickException(str(e)) from e
