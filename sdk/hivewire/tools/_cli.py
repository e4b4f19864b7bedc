"""The ``hivewire`` command line. Each command is a thin layer over a library function.

The commands that run something (``run``, ``shim``, ``archive``, ``register``) read their settings the same
way: ``--config FILE``, environment variables and flags, in increasing precedence. Every flag sets one
declared key (``docs/configuration.md``) through :data:`FLAGS`, the one table from flags to keys; ``--set
KEY=VALUE`` sets any key. A configuration error is a usage error (exit status 2) whose message names the flag
next to the key.
"""

from __future__ import annotations

import logging
import re
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import click

from hivewire._version import __version__
from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.config._files import SettingMap
from hivewire.config._key import Key, Prefix
from hivewire.config._kinds import Choice, Duration, HostPorts, Integer, Number
from hivewire.errors import ConfigError, HivewireError

if TYPE_CHECKING:
    from hivewire.metastore._discovery import DiscoveryConfig

_F = TypeVar("_F", bound=Callable[..., None])


@dataclass(frozen=True)
class Flag:
    """A command-line option that sets one declared key, or with ``prefix`` keys under a pass-through prefix
    (repeated ``KEY=VALUE``). A ``switch`` takes no value and sets the key to it; ``repeat`` joins repeated
    values with commas. ``help`` defaults to the key's doc."""

    option: str
    key: Key[object] | None = None
    prefix: Prefix | None = None
    short: str | None = None
    switch: str | None = None
    repeat: bool = False
    metavar: str | None = None
    help: str | None = None

    @property
    def dest(self) -> str:
        return self.option.lstrip("-").replace("-", "_")

    @property
    def name(self) -> str:
        """The key, or the prefix with ``*``."""
        return self.key.name if self.key is not None else f"{self.prefix.name if self.prefix else ''}*"


def _kafka(topic_flag: str = "--topic") -> tuple[Flag, ...]:
    return (
        Flag("--bootstrap-servers", keys.BOOTSTRAP_SERVERS, metavar="HOST:PORT,..."),
        Flag(topic_flag, keys.TOPIC),
    )


#: Every flag of every command that reads the configuration, and the key each sets.
FLAGS: dict[str, tuple[Flag, ...]] = {
    "run": (
        *_kafka(),
        Flag("--instance-name", keys.INSTANCE_NAME),
        Flag("--endpoint-port", keys.ENDPOINT_PORT, metavar="PORT"),
    ),
    "shim": (
        Flag("--upstream", keys.SHIM_UPSTREAM, metavar="URIS"),
        Flag("--upstream-zookeeper", keys.SHIM_UPSTREAM_ZOOKEEPER, metavar="QUORUM"),
        Flag("--upstream-namespace", keys.SHIM_UPSTREAM_NAMESPACE),
        Flag("--upstream-hive-site", keys.SHIM_UPSTREAM_HIVE_SITE, metavar="FILE"),
        Flag("--port", keys.SHIM_PORT),
        Flag("--bind", keys.SHIM_BIND),
        Flag("--advertise", keys.SHIM_ADVERTISE, metavar="HOST:PORT"),
        Flag("--framed", keys.SHIM_FRAMED, switch="true"),
        Flag("--kafka-bootstrap-servers", keys.BOOTSTRAP_SERVERS, metavar="HOST:PORT,..."),
        Flag("--topic", keys.TOPIC),
        Flag("--spool-dir", keys.SHIM_SPOOL_DIR, metavar="DIR"),
        Flag("--spool-fsync", keys.SHIM_SPOOL_FSYNC),
        Flag("--producer-property", prefix=keys.SHIM_PRODUCER_PREFIX, metavar="KEY=VALUE"),
        Flag("--partition-by-old-name", keys.SHIM_PARTITION_BY_OLD_NAME, switch="true"),
        Flag("--zookeeper", keys.SHIM_ZOOKEEPER, metavar="QUORUM"),
        Flag("--namespace", keys.SHIM_NAMESPACE),
        Flag("--hive-site", keys.SHIM_HIVE_SITE, metavar="FILE"),
        Flag("--hive-version", keys.SHIM_HIVE_VERSION),
        Flag("--publish-failures", keys.SHIM_PUBLISH_FAILURES, switch="true"),
        Flag(
            "--no-database-events",
            keys.SHIM_DATABASE_EVENTS,
            switch="false",
            help="Do not publish database events (for consumers that know only Apiary's seven types).",
        ),
        Flag("--timeout", keys.SHIM_TIMEOUT, metavar="SECONDS"),
        Flag("--client-send-timeout", keys.SHIM_CLIENT_SEND_TIMEOUT, metavar="SECONDS"),
        Flag("--read-timeout", keys.SHIM_READ_TIMEOUT, metavar="SECONDS"),
        Flag("--max-message-size", keys.SHIM_MAX_MESSAGE_SIZE, metavar="BYTES"),
    ),
    "archive": (
        *_kafka(),
        Flag("--table", keys.ARCHIVE_TABLE, metavar="PATH"),
        Flag("--app-id", keys.ARCHIVE_APP_ID),
        Flag("--group-id", keys.ARCHIVE_GROUP_ID),
        Flag("--flush-events", keys.ARCHIVE_FLUSH_EVENTS, metavar="N"),
        Flag("--flush-seconds", keys.ARCHIVE_FLUSH_INTERVAL, metavar="SECONDS"),
        Flag("--consumer-config", prefix=keys.CONSUMER_PREFIX, short="-X", metavar="KEY=VALUE"),
        Flag("--storage-option", prefix=keys.ARCHIVE_STORAGE_PREFIX, metavar="KEY=VALUE"),
    ),
    "register": (
        Flag("--metastore", keys.REGISTER_METASTORE, metavar="HOST:PORT"),
        Flag("--zookeeper", keys.REGISTER_ZOOKEEPER, metavar="QUORUM"),
        Flag("--namespace", keys.REGISTER_NAMESPACE),
        Flag("--acl", keys.REGISTER_ACL, repeat=True, metavar="SCHEME:ID:PERMS"),
        Flag("--interval", keys.REGISTER_INTERVAL, metavar="SECONDS"),
        Flag("--check-timeout", keys.REGISTER_CHECK_TIMEOUT, metavar="SECONDS"),
        Flag("--hive-site", keys.REGISTER_HIVE_SITE, metavar="FILE"),
    ),
}


def _help(flag: Flag) -> str:
    if flag.help is not None:
        return flag.help
    if flag.prefix is not None:
        return f"Sets {flag.prefix.name}KEY (repeatable): {flag.prefix.doc}".replace("`", "")
    assert flag.key is not None
    text = f"{flag.key.doc} ({flag.key.name})".replace("`", "")
    if flag.repeat:
        text += " Repeatable."
    default = flag.key.default_doc or flag.key.default
    if default and flag.switch is None:
        text += f"  [default: {default.replace('`', '')}]"
    return text


_METAVARS: dict[type, str] = {Integer: "INTEGER", Number: "NUMBER", Duration: "TIME", HostPorts: "HOST:PORT,..."}


def _options(command: str) -> Callable[[_F], _F]:
    """Add ``--config``, the command's flags (:data:`FLAGS`) and ``--set`` to a command."""

    def decorate(fn: _F) -> _F:
        options: list[Callable[[_F], _F]] = [
            click.option(
                "--config",
                "config_file",
                type=click.Path(dir_okay=False),
                help="A .properties, .toml or Hadoop .xml file of settings (docs/configuration.md).",
            )
        ]
        for flag in FLAGS[command]:
            names = [flag.short, flag.option] if flag.short else [flag.option]
            if flag.switch is not None:
                options.append(click.option(*names, flag.dest, is_flag=True, default=None, help=_help(flag)))
            elif flag.prefix is not None or flag.repeat:
                options.append(click.option(*names, flag.dest, multiple=True, metavar=flag.metavar, help=_help(flag)))
            else:
                kind = flag.key.kind if flag.key is not None else None
                choice = click.Choice(kind.values, case_sensitive=False) if isinstance(kind, Choice) else None
                metavar = flag.metavar or (None if choice else _METAVARS.get(type(kind), "TEXT"))
                options.append(click.option(*names, flag.dest, type=choice, metavar=metavar, help=_help(flag)))
        options.append(
            click.option("--set", "settings", multiple=True, metavar="KEY=VALUE", help="Any setting (repeatable).")
        )
        for option in reversed(options):
            fn = option(fn)
        return fn

    return decorate


def _load(command: str, params: dict[str, object], base: SettingMap | None = None) -> Config:
    """The command's configuration: ``--config``, the environment, ``--set`` and the flags (which win)."""
    overrides: dict[str, str] = {}
    named: dict[str, str] = {}
    for item in _strings(params.pop("settings", ())):
        key, setting = _key_value("--set", item)
        overrides[key] = setting
    for flag in FLAGS[command]:
        value = params.pop(flag.dest, None)
        if value is None or value is False or value == ():
            continue
        if flag.prefix is not None:
            for item in _strings(value):
                key, setting = _key_value(flag.option, item)
                overrides[flag.prefix.name + key] = setting
                named[flag.prefix.name + key] = f"{flag.short or flag.option} {key}"
            continue
        assert flag.key is not None
        if flag.switch is not None:
            overrides[flag.key.name] = flag.switch
        elif flag.repeat:
            overrides[flag.key.name] = ",".join(_strings(value))
        else:
            overrides[flag.key.name] = str(value)
        named[flag.key.name] = flag.option
    file = params.pop("config_file", None)
    return Config.load(base=base, file=file if isinstance(file, str) else None, overrides=overrides, flags=named)


def _strings(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, (tuple, list)) else ()


def _key_value(option: str, item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint=option)
    return key.strip(), value


def _usage(error: ConfigError, command: str) -> click.UsageError:
    """A configuration error as a usage error, naming each key's flag next to it."""
    message = str(error)
    flags: Mapping[str, str] = {f.key.name: f.option for f in FLAGS[command] if f.key is not None}
    for key in sorted(flags, key=len, reverse=True):
        message = re.sub(rf"(?<![\w.-]){re.escape(key)}(?![\w.])", f"{flags[key]} ({key})", message)
    return click.UsageError(message)


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


@main.command()
@click.argument("target", required=False, metavar="[MODULE:APP]")
@click.option(
    "--listener",
    "listeners",
    multiple=True,
    metavar="PKG.MODULE:NAME",
    help="Add a listener by import path (repeatable; like apiary.listener.list).",
)
@_options("run")
def run(target: str | None, listeners: tuple[str, ...], **params: object) -> None:
    """Run an App's listeners on the Apiary topic until SIGTERM/SIGINT.

    MODULE:APP names an App object (``listeners:app``; the current directory is importable). Without it,
    the listeners come from apiary.listener.list, as in Drone Fly. Settings come from --config, environment
    variables (APIARY_BOOTSTRAP_SERVERS, ...) and flags, in increasing precedence.
    """
    import os

    from hivewire.runtime._app import App
    from hivewire.runtime._listener import load_object

    try:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        if target:
            app = load_object(target if ":" in target else f"{target}:app")
            if callable(app) and not isinstance(app, App):
                app = app()  # an app factory
            if not isinstance(app, App):
                raise click.ClickException(f"{target} is a {type(app).__name__}, not a hivewire.App")
        else:
            app = None
        config = _load("run", params, base=app.config if app else None)
        if listeners:
            known = config.optional(keys.LISTENER_LIST) or ()
            config = config.merged({keys.LISTENER_LIST.name: ",".join([*known, *listeners])})
        if app is None:
            app = App(config.read(keys.INSTANCE_NAME))
        app.run(config=config)
    except ConfigError as e:
        raise _usage(e, "run") from e
    except HivewireError as e:
        raise click.ClickException(str(e)) from e


@main.command()
def demo() -> None:
    """Start a local metastore, make changes, and print what a listener receives. Needs Java 17+."""
    from hivewire.tools._demo import run_demo

    try:
        run_demo(echo=click.echo)
    except HivewireError as e:
        raise click.ClickException(str(e)) from e


@main.command()
@_options("shim")
def shim(**params: object) -> None:
    """Front a Hive Metastore: relay every call, publish an event for every change. Runs until SIGTERM/SIGINT.

    Give the metastores (--upstream) or where to discover them (--upstream-zookeeper or --upstream-hive-site);
    with --kafka-bootstrap-servers and --topic, changes are published as Apiary events.
    """
    from hivewire_shim import Shim
    from hivewire_shim.server import ShimSettings

    try:
        settings = ShimSettings.from_config(_load("shim", params))
    except ConfigError as e:
        raise _usage(e, "shim") from e
    target = None
    try:
        target = settings.open_upstream()
        sinks = settings.sinks()
        if not sinks:
            logging.getLogger("hivewire_shim").warning(
                "no --kafka-bootstrap-servers/--topic: the shim relays calls but publishes no events"
            )
        server = Shim(target, sinks=sinks, **settings.keywords())
        server.start()
    except (HivewireError, OSError) as e:
        if target is not None and not isinstance(target, str):
            target.close()
        raise (_usage(e, "shim") if isinstance(e, ConfigError) else click.ClickException(str(e))) from e
    stop = _stop_on_signals("hivewire_shim", "stopping")
    click.echo(f"hivewire shim serving on {server.uri}", err=True)
    try:
        server.serve_forever(stop)
    finally:
        if not isinstance(target, str):
            target.close()  # end the discovery session, or its reconnecting threads outlive the command


@main.command("replay-rejected")
@click.option(
    "--spool-dir",
    required=True,
    type=click.Path(file_okay=False, exists=True),
    help="The shim's --spool-dir. Stop the shim that uses it first.",
)
def replay_rejected(spool_dir: str) -> None:
    """Put the events Kafka refused for good (the spool's 'rejected' file) back into the shim's spool.

    Raise the size limit that made Kafka refuse them first; the shim sends them when it starts next,
    after what its spool already holds. See docs/shim.md.
    """
    from hivewire_shim import replay_rejected as replay

    try:
        count = replay(spool_dir)
    except (HivewireError, OSError) as e:
        raise click.ClickException(str(e)) from e
    click.echo(f"{count} rejected event(s) are back in {spool_dir}; start the shim to send them")


@main.command()
@click.option(
    "--zookeeper",
    "quorum",
    metavar="QUORUM",
    help="ZooKeeper ensemble, such as zk1:2181,zk2:2181 (default: the quorum in --hive-site).",
)
@click.option("--namespace", default=None, help="Parent znode of the registrations  [default: hive_metastore]")
@click.option(
    "--hive-site",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="A hive-site.xml with metastore.service.discovery.mode=zookeeper (quorum, namespace, TLS).",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of one URI per line.")
def discover(quorum: str | None, namespace: str | None, hive_site: str | None, as_json: bool) -> None:
    """Print the metastores registered in ZooKeeper (HIVE-20794), one thrift:// URI per line."""
    import json

    from hivewire.metastore._discovery import discover_metastores

    try:
        uris = discover_metastores(_discovery_config(quorum, namespace, hive_site))
    except HivewireError as e:
        raise click.ClickException(str(e)) from e
    click.echo(json.dumps(uris) if as_json else "\n".join(uris))


@main.command()
@_options("register")
def register(**params: object) -> None:
    """Register an existing metastore in ZooKeeper the way Hive 4 does, while it passes health checks.

    Runs until SIGTERM or SIGINT, then withdraws its node and exits.
    """
    from hivewire.metastore._registration import Registration, RegistrationSettings

    try:
        registration = Registration.from_settings(RegistrationSettings.from_config(_load("register", params)))
    except ConfigError as e:
        raise _usage(e, "register") from e
    except HivewireError as e:
        raise click.ClickException(str(e)) from e
    registration.run(_stop_on_signals("hivewire.registration", "stopping"))


def _discovery_config(quorum: str | None, namespace: str | None, hive_site: str | None) -> DiscoveryConfig:
    """The ZooKeeper settings of --zookeeper/--namespace, or of a hive-site.xml (flags win)."""
    from hivewire.metastore._discovery import DiscoveryConfig

    config = DiscoveryConfig.from_parts(quorum, namespace, hive_site)
    if config is None:
        raise click.UsageError("give --zookeeper QUORUM or --hive-site FILE")
    return config


def _stop_on_signals(logger: str, doing: str) -> threading.Event:
    """An event set by SIGTERM or SIGINT, for commands that run until stopped."""
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        logging.getLogger(logger).info("%s: %s", signal.Signals(signum).name, doing)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return stop


@main.command()
@_options("archive")
def archive(**params: object) -> None:
    """Stream the topic's events into a Delta table, exactly once (the offsets ride in the Delta commits).

    Runs until SIGTERM or SIGINT, then writes what it holds and exits. Start several with the same
    --app-id to share the partitions. See docs/data.md.
    """
    try:
        from hivewire.data._archive import Archiver, ArchiveSettings

        archiver = Archiver.from_settings(ArchiveSettings.from_config(_load("archive", params)))
    except ConfigError as e:
        raise _usage(e, "archive") from e
    except HivewireError as e:
        raise click.ClickException(str(e)) from e
    stop = _stop_on_signals("hivewire.archive", "flushing and stopping")
    try:
        stats = archiver.run(stop)
    except HivewireError as e:
        raise click.ClickException(str(e)) from e
    logging.getLogger("hivewire.archive").info(
        "archived %d rows in %d commits (%d undecodable, %d already in the table, %d conflicts)",
        stats.rows_written,
        stats.commits,
        stats.undecodable,
        stats.skipped,
        stats.conflicts,
    )
