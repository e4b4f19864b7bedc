"""The ``hivewire`` command line: one module per command, each a thin layer over a library function.

Shared conventions (flags that set declared keys, ``--config``, ``--set``, usage errors) are in
:mod:`hivewire.tools._cli._options`.
"""

from __future__ import annotations

import click

from hivewire._version import __version__
from hivewire.tools._cli import (
    _archive,
    _bridge,
    _check_config,
    _coordination,
    _demo,
    _discover,
    _dlq,
    _listener,
    _local,
    _register,
    _run,
    _shim,
    _sideline,
    _spark_history,
    _status,
    _tail,
)
from hivewire.tools._cli._options import Flag, Group


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="hivewire")
def main() -> None:
    """hivewire: Python functions as Hive Metastore event listeners, and an event-publishing HMS shim.

    --log-level and --log-format are accepted before or after any command's name. Shell completion:
    eval "$(_HIVEWIRE_COMPLETE=bash_source hivewire)" (zsh_source, fish_source), see docs/cli.md.
    """


for _command in (_run.run, _demo.demo, _shim.shim, _shim.replay_rejected, _discover.discover, _register.register,
                 _archive.archive, _check_config.check_config, _tail.tail, _local.local, _dlq.dlq,
                 _status.status, _listener.listener, _sideline.sideline, _bridge.bridge,
                 _spark_history.spark_history):  # fmt: skip
    main.add_command(_command)

#: Every flag of every command that reads the configuration, and the key each sets.
FLAGS: dict[str, tuple[Flag, ...]] = {
    "run": _run.FLAGS,
    "shim": _shim.FLAGS,
    "archive": _archive.FLAGS,
    "register": _register.FLAGS,
    "check-config": _check_config.FLAGS,
    "tail": _tail.FLAGS,
    "dlq replay": _dlq.FLAGS,
    "status": _coordination.FLAGS,
    "listener": _coordination.FLAGS,
    "sideline": _coordination.FLAGS,
    "bridge": _bridge.FLAGS,
    "spark-history": _spark_history.FLAGS,
}
