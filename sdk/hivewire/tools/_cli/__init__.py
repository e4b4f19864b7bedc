"""The ``hivewire`` command line: one module per command, each a thin layer over a library function.

Shared conventions (flags that set declared keys, ``--config``, ``--set``, usage errors) are in
:mod:`hivewire.tools._cli._options`.
"""

from __future__ import annotations

import logging
import sys

import click

from hivewire._version import __version__
from hivewire.tools._cli import _archive, _demo, _discover, _register, _run, _shim, _spark_history
from hivewire.tools._cli._options import Flag


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="hivewire")
@click.option(
    "--log-level",
    default="INFO",
    show_default=True,
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
    help="Level of hivewire's log output (on stderr).",
)
def main(log_level: str) -> None:
    """hivewire: Python functions as Hive Metastore event listeners, and an event-publishing HMS shim."""
    logging.basicConfig(
        level=log_level.upper(), stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )


for _command in (_run.run, _demo.demo, _shim.shim, _shim.replay_rejected, _discover.discover, _register.register,
                 _archive.archive, _spark_history.spark_history):  # fmt: skip
    main.add_command(_command)

#: Every flag of every command that reads the configuration, and the key each sets.
FLAGS: dict[str, tuple[Flag, ...]] = {
    "run": _run.FLAGS,
    "shim": _shim.FLAGS,
    "archive": _archive.FLAGS,
    "register": _register.FLAGS,
    "spark-history": _spark_history.FLAGS,
}
