"""What ``hivewire status``, ``listener`` and ``sideline`` share: the ZooKeeper flags and opening an app's state."""

from __future__ import annotations

import contextlib
import getpass
import socket
from collections.abc import Iterator

import click

from hivewire.config import _keys as keys
from hivewire.coordination._settings import CoordinationSettings
from hivewire.coordination._state import AppState
from hivewire.errors import ConfigError, HivewireError
from hivewire.tools._cli._options import Flag, load, usage

FLAGS: tuple[Flag, ...] = (
    Flag("--zookeeper", keys.COORDINATION_ZOOKEEPER, metavar="QUORUM"),
    Flag("--root", keys.COORDINATION_ROOT, metavar="ZNODE"),
)


@contextlib.contextmanager
def app_state(app: str, params: dict[str, object]) -> Iterator[AppState]:
    """The state of ``app`` in the configured ZooKeeper; configuration errors are usage errors, the others
    ClickExceptions (exit status 1) with hivewire's message."""
    try:
        settings = CoordinationSettings.from_config(load(FLAGS, params))
        coordinator = settings.connect()
    except ConfigError as e:
        raise usage(e, FLAGS) from e
    except HivewireError as e:
        raise click.ClickException(str(e)) from e
    try:
        yield AppState(coordinator, app)
    except ConfigError as e:
        raise usage(e, FLAGS) from e
    except HivewireError as e:
        raise click.ClickException(str(e)) from e
    finally:
        coordinator.close()


def who() -> str:
    """``user@host``: who changed a switch or a sideline, for the record."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "?"
    return f"{user}@{socket.gethostname()}"


def refuse_singleton(state: AppState, name: str, what: str) -> None:
    """Refuse to ``what`` (pause, sideline) a singleton listener: its instance does not obey those yet, and
    recording a switch nobody follows would look like it had worked."""
    leading = any(name in instance.leading for instance in state.instances().values())
    if leading or state.progress(name):
        raise click.ClickException(
            f"{name!r} is a singleton listener of {state.app}, and singleton listeners cannot be {what} yet: "
            "stop the instances or remove singleton=True from the listener to hold it back"
        )
