"""``hivewire check-config``: the effective settings, each with where it came from, and what is wrong.

Given a command (``check-config run listeners:app``), only the settings that command reads are shown, as that
command would see them: for ``run`` with an app, the app's own settings underneath and ``instance.name``
defaulting to the app's name, as ``hivewire run`` does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import click

from hivewire.config import _keys as keys
from hivewire.config._config import Effective
from hivewire.config._key import Prefix, Section
from hivewire.tools._cli._options import Flag, kafka_flags, load, options

FLAGS: tuple[Flag, ...] = kafka_flags()

_TOPIC_KEYS = (keys.BOOTSTRAP_SERVERS.name, keys.TOPIC.name)


class Reads:
    """What a command reads: whole sections of the reference, single keys of others, pass-through prefixes."""

    def __init__(self, sections: Sequence[Section], names: Sequence[str] = (), prefixes: Sequence[Prefix] = ()) -> None:
        self.sections = tuple(sections)
        self.names = frozenset(names)
        self.prefixes = tuple(p.name for p in prefixes)

    def __contains__(self, name: str) -> bool:
        declared = keys.find_key(name)
        if declared is not None:
            return declared.section in self.sections or declared.name in self.names
        return name.startswith(self.prefixes)


#: The settings each command reads (docs/configuration.md's sections say the same).
READS = {
    "run": Reads(
        [keys.KAFKA, keys.RUNTIME, keys.METASTORE, keys.ZOOKEEPER, keys.COORDINATION],
        prefixes=[keys.CONSUMER_PREFIX, keys.DEAD_LETTER_PRODUCER_PREFIX, keys.ICEBERG_IO_PREFIX],
    ),
    "shim": Reads([keys.SHIM], _TOPIC_KEYS, [keys.SHIM_PRODUCER_PREFIX]),
    "archive": Reads([keys.ARCHIVE], _TOPIC_KEYS, [keys.CONSUMER_PREFIX, keys.ARCHIVE_STORAGE_PREFIX]),
    "spark-history": Reads([keys.SPARK_HISTORY], _TOPIC_KEYS, [keys.CONSUMER_PREFIX, keys.SPARK_CONF_PREFIX]),
    "register": Reads([keys.REGISTER]),
}


@click.command("check-config")
@click.argument("command", required=False, type=click.Choice(sorted(READS)))
@click.argument("target", required=False, metavar="[MODULE:APP]")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of {key, value, source} objects.")
@options(FLAGS)
def check_config(command: str | None, target: str | None, as_json: bool, **params: object) -> None:
    """Check the settings (--config, environment, flags) and print each one in effect with its origin.

    Unknown keys and invalid values fail (exit status 2) with what to write instead. Secrets are masked.
    COMMAND (run, shim, archive, ...) shows only what that command reads; for run, MODULE:APP adds the app's
    own settings and its name as instance.name, as `hivewire run MODULE:APP` does. Without COMMAND, the
    settings of every command are shown.
    """
    app = None
    if target is not None:
        if command != "run":
            raise click.UsageError("MODULE:APP goes with the run command: check-config run MODULE:APP")
        from hivewire.tools._cli._run import load_app

        app = load_app(target)
    config = load(FLAGS, params, base=app.config if app is not None else None)
    rows = config.effective()
    if command is not None:
        reads = READS[command]
        rows = [r for r in rows if r.key in reads]
    shown = [
        _instance_name(r, target, app.name if app else None)
        if command == "run"
        else (r.key, r.value, str(r.provenance))
        for r in rows
    ]
    if as_json:
        click.echo(json.dumps([{"key": key, "value": value, "source": source} for key, value, source in shown]))
        return
    width = max((len(key) for key, _, _ in shown), default=0)
    for key, value, source in shown:
        click.echo(f"{key:<{width}}  {value:<24}  {source}")


def _instance_name(row: Effective, target: str | None, name: str | None) -> tuple[str, str, str]:
    """A row as ``run`` sees it: ``instance.name`` unset is the app's name (the group is named after it)."""
    shown = (row.key, row.value, str(row.provenance))
    if row.key != keys.INSTANCE_NAME.name or row.provenance.source != "default":
        return shown
    if name is None:
        return (*shown[:2], "default; hivewire run MODULE:APP uses the app's name (check-config run MODULE:APP)")
    return row.key, name, f"the app's name ({target})"
