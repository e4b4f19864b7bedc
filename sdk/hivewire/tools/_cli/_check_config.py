"""``hivewire check-config``: the effective settings, each with where it came from, and what is wrong."""

from __future__ import annotations

import json

import click

from hivewire.tools._cli._options import Flag, kafka_flags, load, options

FLAGS: tuple[Flag, ...] = kafka_flags()


@click.command("check-config")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of {key, value, source} objects.")
@options(FLAGS)
def check_config(as_json: bool, **params: object) -> None:
    """Check the settings (--config, environment, flags) and print each one in effect with its origin.

    Unknown keys and invalid values fail (exit status 2) with what to write instead. Secrets are masked.
    Settings of every command are shown: run, archive, shim and register read the same configuration.
    """
    config = load(FLAGS, params)
    rows = config.effective()
    if as_json:
        click.echo(json.dumps([{"key": r.key, "value": r.value, "source": str(r.provenance)} for r in rows]))
        return
    width = max((len(r.key) for r in rows), default=0)
    for row in rows:
        click.echo(f"{row.key:<{width}}  {row.value:<24}  {row.provenance}")
