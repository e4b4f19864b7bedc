"""``hivewire run``: run an App's listeners on the Apiary topic."""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING

import click

from hivewire.config import _keys as keys
from hivewire.errors import ConfigError, HivewireError
from hivewire.tools._cli._options import Flag, kafka_flags, load, options, usage

if TYPE_CHECKING:
    from hivewire.runtime._app import App

#: ``hivewire run`` exits with this plus the signal's number when a second signal stopped it with events
#: left uncommitted (130 for Ctrl-C), as a shell reports a command a signal killed.
EXIT_SIGNALLED = 128

FLAGS: tuple[Flag, ...] = (
    *kafka_flags(),
    Flag(
        "--group-instance-id",
        prefix=keys.CONSUMER_PREFIX,
        under="group.instance.id",
        metavar="ID",
        help="Static group membership (KIP-345): a restart in place within session.timeout.ms gets its "
        "partitions back at once, even after kill -9; a stable name per instance, such as a StatefulSet's pod "
        "name (docs/runtime.md).",
    ),
    Flag("--instance-name", keys.INSTANCE_NAME),
    Flag("--endpoint-port", keys.ENDPOINT_PORT, metavar="PORT"),
    Flag("--endpoint-address", keys.ENDPOINT_ADDRESS, metavar="ADDRESS"),
    Flag("--workers", keys.WORKERS, metavar="N"),
    # The metastore behind event.handler (InsertEvent.table, lookups from listeners).
    Flag("--metastore-uris", keys.METASTORE_URIS, metavar="thrift://HOST:PORT,..."),
    # Coordination: join the app's group (`hivewire status` lists this instance).
    Flag("--zookeeper", keys.COORDINATION_ZOOKEEPER, metavar="QUORUM"),
    Flag("--root", keys.COORDINATION_ROOT, metavar="ZNODE"),
)


@click.command()
@click.argument("target", required=False, metavar="[MODULE:APP]")
@click.option(
    "--listener",
    "listeners",
    multiple=True,
    metavar="PKG.MODULE:NAME",
    help="Add a listener by import path (repeatable; like apiary.listener.list).",
)
@options(FLAGS)
def run(target: str | None, listeners: tuple[str, ...], **params: object) -> None:
    """Run an App's listeners on the Apiary topic until SIGTERM/SIGINT.

    Ctrl-C lets each listener finish its call (saying which); a second Ctrl-C stops without waiting, and
    those events are delivered again at the next start; the exit status is then 130 (143 after a second
    SIGTERM), as a shell reports a command a signal stopped, instead of 0.

    MODULE:APP names an App object (``listeners:app``; the current directory is importable). Without it,
    the listeners come from apiary.listener.list, as in Drone Fly. Settings come from --config, environment
    variables (APIARY_BOOTSTRAP_SERVERS, ...) and flags, in increasing precedence.
    """
    from hivewire.runtime._app import App

    try:
        importable_cwd()  # listeners named in apiary.listener.list too, as MODULE:APP's module
        app = load_app(target) if target else None
        config = load(FLAGS, params, base=app.config if app else None)
        if listeners:
            known = config.optional(keys.LISTENER_LIST) or ()
            config = config.merged({keys.LISTENER_LIST.name: ",".join([*known, *listeners])})
        if app is None and not config.optional(keys.LISTENER_LIST):
            raise click.UsageError(
                "give MODULE:APP, e.g. `hivewire run listeners:app` (the App named app in listeners.py of the "
                "current directory), or listeners with --listener PKG.MODULE:NAME or apiary.listener.list"
            )
        workers = config.read(keys.WORKERS)
        static = f"{keys.CONSUMER_PREFIX.name}group.instance.id"
        if workers > 1 and config.with_prefix(keys.CONSUMER_PREFIX.name).get("group.instance.id"):
            raise ConfigError(
                static,
                "names one member: it cannot be given with --workers above 1 (each worker "
                "is a member of the group; run one instance per name instead)",
            )
        if workers > 1:
            from hivewire.tools._supervisor import Supervisor, worker_command

            supervisor = Supervisor(
                worker_command(sys.argv[1:]),
                workers,
                port=config.read(keys.ENDPOINT_PORT),
                shutdown_timeout=config.read(keys.SHUTDOWN_TIMEOUT),
            )
            sys.exit(supervisor.run())
        if app is None:
            app = App(config.read(keys.INSTANCE_NAME))
        app.run(config=config)
        if app.abandoned_by is not None:  # a second Ctrl-C left events uncommitted: 130 (143 for SIGTERM)
            sys.exit(EXIT_SIGNALLED + app.abandoned_by)
    except ConfigError as e:
        raise usage(e, FLAGS) from e
    except HivewireError as e:
        raise click.ClickException(str(e)) from e


def importable_cwd() -> None:
    """Put the current directory first on ``sys.path``, as ``python -m`` does, for the user's modules."""
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())


def load_app(target: str) -> App:
    """The App (or app factory's App) that ``target``, as typed on the command line, names; an error in the
    user's module is a message naming ``target`` with the user's own frames (the whole traceback at DEBUG). The
    current directory is importable, as for ``python -m``."""
    from hivewire.runtime._app import App
    from hivewire.runtime._frames import user_place, user_traceback
    from hivewire.runtime._listener import load_object

    importable_cwd()
    path = target if ":" in target else f"{target}:app"
    try:
        app = load_object(path)
    except ConfigError as e:
        logging.getLogger("hivewire.run").debug("importing %s", path, exc_info=e.__cause__ or e)
        message = str(e).removeprefix(e.key + ": ").replace(f" for {path!r}", "", 1)
        raise click.ClickException(f"{target}: {message}") from e
    if callable(app) and not isinstance(app, App):
        try:
            app = app()  # an app factory
        except Exception as e:
            logging.getLogger("hivewire.run").debug("calling %s", path, exc_info=e)
            raise click.ClickException(
                f"{target}: the app factory raised {type(e).__name__} at {user_place(e)}\n"
                f"{user_traceback(e, header=False)}"
            ) from e
    if not isinstance(app, App):
        raise click.ClickException(f"{target} is a {type(app).__name__}, not a hivewire.App")
    return app
