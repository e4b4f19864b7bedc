"""What every command shares: flags that set declared keys, ``--config``/``--set``, usage errors, signals.

The commands that run something read their settings the same way: ``--config FILE``, environment variables
and flags, in increasing precedence. Every flag sets one declared key (``docs/configuration.md``); each
command lists its flags as a tuple of :class:`Flag` (its ``FLAGS``), and ``--set KEY=VALUE`` sets any key. A
configuration error is a usage error (exit status 2) whose message names the flag next to the key.
"""

from __future__ import annotations

import logging
import re
import signal
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from hivewire.config import _keys as keys
from hivewire.config._config import Config, refuse
from hivewire.config._files import SettingMap
from hivewire.config._key import Key, Prefix
from hivewire.config._kinds import Choice, Duration, HostPorts, Integer, Number
from hivewire.errors import ConfigError
from hivewire.tools._cli import _logs

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
    #: Other spellings of the option (kept for older command lines).
    aliases: tuple[str, ...] = ()
    #: With ``prefix``: the one key under the prefix this flag sets (``group.id``), instead of ``KEY=VALUE``.
    under: str | None = None

    @property
    def dest(self) -> str:
        return self.option.lstrip("-").replace("-", "_")

    @property
    def name(self) -> str:
        """The key, or the prefix with ``*`` (or with the key under it)."""
        if self.key is not None:
            return self.key.name
        return f"{self.prefix.name if self.prefix else ''}{self.under or '*'}"


_GROUP_HELP = "Kafka consumer group  [default: apiary-kafka-metastore-receiver-<instance.name>, as Drone Fly's]"


def kafka_flags(
    topic_flag: str = "--topic",
    *,
    prefix: Prefix | None = keys.CONSUMER_PREFIX,
    group: Key[object] | None = None,
    consumer: bool = True,
) -> tuple[Flag, ...]:
    """The Kafka flags every command that talks to Kafka shares: ``--bootstrap-servers``, ``--topic``,
    ``-X/--kafka-property KEY=VALUE`` (client properties under ``prefix``) and, for a consumer,
    ``--group`` (``group``, else ``group.id`` under the prefix) and ``--from-beginning``."""
    flags = [
        Flag("--bootstrap-servers", keys.BOOTSTRAP_SERVERS, metavar="HOST:PORT,..."),
        Flag(topic_flag, keys.TOPIC),
    ]
    if prefix is not None:
        flags.append(
            Flag(
                "--kafka-property",
                prefix=prefix,
                short="-X",
                metavar="KEY=VALUE",
                help=f"A Kafka client property (repeatable), as {prefix.name}KEY.",
            )
        )
    if consumer:
        if group is not None:
            flags.append(Flag("--group", group, help=f"Kafka consumer group ({group.name})."))
        elif prefix is not None:
            flags.append(Flag("--group", prefix=prefix, under="group.id", metavar="GROUP", help=_GROUP_HELP))
        if prefix is not None:
            flags.append(
                Flag(
                    "--from-beginning",
                    prefix=prefix,
                    under="auto.offset.reset",
                    switch="earliest",
                    help="Start from the oldest retained event when the group has no committed offset.",
                )
            )
    return tuple(flags)


def _help(flag: Flag) -> str:
    if flag.help is not None:
        return flag.help
    if flag.prefix is not None and flag.under is None:
        return f"Sets {flag.prefix.name}KEY (repeatable): {flag.prefix.doc}".replace("`", "")
    if flag.key is None:
        return flag.name
    text = f"{flag.key.doc} ({flag.key.name})".replace("`", "")
    if flag.repeat:
        text += " Repeatable."
    default = flag.key.default_doc or flag.key.default
    if default and flag.switch is None:
        text += f"  [default: {default.replace('`', '')}]"
    return text


_METAVARS: dict[type, str] = {Integer: "INTEGER", Number: "NUMBER", Duration: "TIME", HostPorts: "HOST:PORT,..."}


def options(flags: Sequence[Flag]) -> Callable[[_F], _F]:
    """Add ``--config``, the command's ``flags`` and ``--set`` to a command."""

    def decorate(fn: _F) -> _F:
        options: list[Callable[[_F], _F]] = [
            click.option(
                "--config",
                "config_file",
                type=click.Path(dir_okay=False),
                help="A .properties, .toml or Hadoop .xml file of settings (docs/configuration.md).",
            )
        ]
        for flag in flags:
            names = [flag.short, flag.option, *flag.aliases] if flag.short else [flag.option, *flag.aliases]
            if flag.switch is not None:
                options.append(click.option(*names, flag.dest, is_flag=True, default=None, help=_help(flag)))
            elif (flag.prefix is not None and flag.under is None) or flag.repeat:
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


def load(flags: Sequence[Flag], params: dict[str, object], base: SettingMap | None = None) -> Config:
    """The command's configuration: ``--config``, the environment, ``--set`` and the flags (which win).

    Unknown keys in hivewire's namespaces and invalid values of declared keys are refused here (all of them at
    once, each with its ``file:line``, unknown keys with a "did you mean": :func:`validate`), before the command
    starts anything, as a usage error that names a flag only for a value that came from one."""
    overrides: dict[str, str] = {}
    named: dict[str, str] = {}
    for item in _strings(params.pop("settings", ())):
        key, setting = _key_value("--set", item)
        overrides[key] = setting
    for flag in flags:
        value = params.pop(flag.dest, None)
        if value is None or value is False or value == ():
            continue
        if flag.prefix is not None and flag.under is not None:
            overrides[flag.name] = flag.switch if flag.switch is not None else str(value)
            named[flag.name] = flag.option
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
    config = Config.load(base=base, file=file if isinstance(file, str) else None, overrides=overrides, flags=named)
    try:
        validate(config)
    except ConfigError as e:  # each problem already names the key as written, and where (file:line, flag)
        raise click.UsageError(str(e)) from e
    return config


def validate(config: Config) -> None:
    """Parse every declared key that is set: a bad value fails here, not when a command first reads it. Every
    problem (unknown keys too) is in the one :class:`~hivewire.errors.ConfigError`, each with where it was
    written (``file:line``, the flag); the environment's likely typos are only logged."""
    refuse(config.problems())
    config.check_keys()


def _strings(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, (tuple, list)) else ()


def _key_value(option: str, item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint=option)
    return key.strip(), value


def usage(error: ConfigError, flags: Sequence[Flag]) -> click.UsageError:
    """A configuration error as a usage error, naming each key's flag next to it."""
    message = str(error)
    named: Mapping[str, str] = {f.name: f.option for f in flags if f.key is not None or f.under is not None}
    for key in sorted(named, key=len, reverse=True):
        message = re.sub(rf"(?<![\w.-]){re.escape(key)}(?![\w.])", f"{named[key]} ({key})", message)
    return click.UsageError(message)


def stop_on_signals(logger: str, doing: str) -> threading.Event:
    """An event set by SIGTERM or SIGINT, for commands that run until stopped."""
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        logging.getLogger(logger).info("%s: %s", signal.Signals(signum).name, doing)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return stop


# -- what every command accepts, before or after its name --------------------------------------------------


def _logging_params() -> list[click.Parameter]:
    return [
        click.Option(
            ["--log-level"],
            type=click.Choice(_logs.LEVELS, case_sensitive=False),
            expose_value=False,
            callback=_log_option,
            help="Level of the log output (on stderr).  [default: INFO]",
        ),
        click.Option(
            ["--log-format"],
            type=click.Choice(_logs.FORMATS, case_sensitive=False),
            expose_value=False,
            callback=_log_option,
            help="text, or json: one JSON object per line.  [default: text]",
        ),
    ]


def _log_option(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """Apply ``--log-level``/``--log-format`` whether given before the command's name or after it."""
    chosen: dict[str, str] = ctx.find_root().meta.setdefault("hivewire.logging", {"level": "INFO", "format": "text"})
    if value is not None and param.name is not None:
        chosen[param.name.removeprefix("log_")] = value.lower() if param.name == "log_format" else value.upper()
    _logs.configure(chosen["level"], chosen["format"])


class Group(click.Group):
    """A command group whose commands (and itself) all accept ``--log-level`` and ``--log-format``, before or
    after their name; commands added by any module get them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params.extend(_logging_params())

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        _give_logging_params(cmd)
        super().add_command(cmd, name)


def _give_logging_params(cmd: click.Command) -> None:
    if not any(p.name == "log_level" for p in cmd.params):
        cmd.params.extend(_logging_params())
    if isinstance(cmd, click.Group) and not isinstance(cmd, Group):
        for sub in cmd.commands.values():
            _give_logging_params(sub)
