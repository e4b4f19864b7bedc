"""``hivewire register``: register an existing metastore in ZooKeeper while it passes health checks."""

from __future__ import annotations

import click

from hivewire.config import _keys as keys
from hivewire.errors import ConfigError, HivewireError
from hivewire.tools._cli._options import Flag, load, options, stop_on_signals, usage

FLAGS: tuple[Flag, ...] = (
    Flag("--metastore", keys.REGISTER_METASTORE, metavar="HOST:PORT"),
    Flag("--zookeeper", keys.REGISTER_ZOOKEEPER, metavar="QUORUM"),
    Flag("--namespace", keys.REGISTER_NAMESPACE),
    Flag("--acl", keys.REGISTER_ACL, repeat=True, metavar="SCHEME:ID:PERMS"),
    Flag("--interval", keys.REGISTER_INTERVAL, metavar="SECONDS"),
    Flag("--check-timeout", keys.REGISTER_CHECK_TIMEOUT, metavar="SECONDS"),
    Flag("--hive-site", keys.REGISTER_HIVE_SITE, metavar="FILE"),
)


@click.command()
@options(FLAGS)
def register(**params: object) -> None:
    """Register an existing metastore in ZooKeeper the way Hive 4 does, while it passes health checks.

    Runs until SIGTERM or SIGINT, then withdraws its node and exits.
    """
    from hivewire.metastore._registration import Registration, RegistrationSettings

    try:
        registration = Registration.from_settings(RegistrationSettings.from_config(load(FLAGS, params)))
    except ConfigError as e:
        raise usage(e, FLAGS) from e
    except HivewireError as e:
        raise click.ClickException(str(e)) from e
    registration.run(stop_on_signals("hivewire.registration", "stopping"))
