"""The ``hivewire`` command line. Each command is a thin layer over a library function."""

from __future__ import annotations

import logging
import sys

import click

import hivewire


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(hivewire.__version__, prog_name="hivewire")
@click.option("--log-level", default="INFO", show_default=True,
              type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
              help="Level of hivewire's log output (on stderr).")
def main(log_level: str) -> None:
    """hivewire: Python functions as Hive Metastore event listeners, and an event-publishing HMS shim."""
    logging.basicConfig(level=log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


@main.command()
def demo() -> None:
    """Start a local metastore, make changes, and print what a listener receives. Needs Java 17+."""
    from hivewire.demo import run_demo

    try:
        run_demo(echo=click.echo)
    except hivewire.HivewireError as e:
        raise click.ClickException(str(e)) from e
