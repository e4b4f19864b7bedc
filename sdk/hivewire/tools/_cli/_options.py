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
from typing import TypeVar

import click

from hivewire.config import _keys as keys
from hivewire.config._config import Config
from hivewire.config._files import SettingMap
from hivewire.config._key import Key, Prefix
from hivewire.config._kinds import Choice, Duration, HostPorts, Integer, Number
from hivewire.errors import ConfigError

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


def kafka_flags(topic_flag: str = "--topic") -> tuple[Flag, ...]:
    return (
        Flag("--bootstrap-servers", keys.BOOTSTRAP_SERVERS, metavar="HOST:PORT,..."),
        Flag(topic_flag, keys.TOPIC),
    )


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


def load(flags: Sequence[Flag], params: dict[str, object], base: SettingMap | None = None) -> Config:
    """The command's configuration: ``--config``, the environment, ``--set`` and the flags (which win)."""
    overrides: dict[str, str] = {}
    named: dict[str, str] = {}
    for item in _strings(params.pop("settings", ())):
        key, setting = _key_value("--set", item)
        overrides[key] = setting
    for flag in flags:
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


def usage(error: ConfigError, flags: Sequence[Flag]) -> click.UsageError:
    """A configuration error as a usage error, naming each key's flag next to it."""
    message = str(error)
    named: Mapping[str, str] = {f.key.name: f.option for f in flags if f.key is not None}
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
