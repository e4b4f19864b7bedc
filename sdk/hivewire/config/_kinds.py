"""The kinds of value a configuration key holds: each parses the text a user wrote into a typed value.

A kind raises :class:`Invalid` with a reason ("'abc' is not a whole number"); the reader
(:meth:`hivewire.config.Config.read`) turns that into a :class:`~hivewire.errors.ConfigError` naming the
key as the user wrote it. ``describe()`` says what is expected, for errors and the configuration reference.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Generic, TypeVar

T_co = TypeVar("T_co", covariant=True)


class Invalid(ValueError):
    """A value that does not fit its kind; the message says why, without naming the key."""


def resolve_secret(text: str) -> str:
    """A secret's value: ``file:PATH`` is the content of that file (one trailing newline dropped, as in
    Kubernetes and Docker secrets), ``env:NAME`` the value of that environment variable, anything else itself.

    So that a password need not appear on a command line (readable from ``/proc`` by any local user) or in a
    configuration file. Errors name the file or variable, never a value.
    """
    if text.startswith("file:"):
        path = text[len("file:") :]
        try:
            with open(path, encoding="utf-8") as f:
                content = f.read()
        except OSError as e:
            raise Invalid(f"cannot read the secret file {path!r}: {e.strerror or e}") from None
        except UnicodeDecodeError:
            raise Invalid(f"the secret file {path!r} is not UTF-8 text") from None
        return content[:-1] if content.endswith("\n") else content
    if text.startswith("env:"):
        name = text[len("env:") :]
        value = os.environ.get(name)
        if value is None:
            raise Invalid(f"the environment variable {name!r} named for this secret is not set")
        return value
    return text


def alternatives(values: tuple[str, ...]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    if len(values) <= 1:
        return "".join(values)
    return ", ".join(values[:-1]) + " or " + values[-1]


class Kind(Generic[T_co]):
    """A type of configuration value. Subclasses implement :meth:`parse` and :meth:`describe`."""

    #: Values of this kind are masked wherever settings are shown.
    secret = False

    def parse(self, text: str) -> T_co:
        """The value of ``text`` (already stripped and not blank), or :class:`Invalid`."""
        raise NotImplementedError

    def describe(self) -> str:
        """What is expected, in a few words: ``whole number, 0 to 65535``."""
        raise NotImplementedError


def _bounds(minimum: float | None, maximum: float | None, *, open_minimum: bool = False) -> str:
    if minimum is not None and maximum is not None:
        return f"between {minimum:g} and {maximum:g}"
    if minimum is not None:
        return f"more than {minimum:g}" if open_minimum else f"at least {minimum:g}"
    return f"at most {maximum:g}" if maximum is not None else ""


@dataclass(frozen=True)
class Integer(Kind[int]):
    """A whole number, optionally bounded."""

    minimum: int | None = None
    maximum: int | None = None

    def parse(self, text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise Invalid(f"{text!r} is not a whole number") from None
        if (self.minimum is not None and value < self.minimum) or (self.maximum is not None and value > self.maximum):
            raise Invalid(f"{value} must be {_bounds(self.minimum, self.maximum)}")
        return value

    def describe(self) -> str:
        bounds = _bounds(self.minimum, self.maximum)
        return f"whole number {bounds}" if bounds else "whole number"


@dataclass(frozen=True)
class Number(Kind[float]):
    """A decimal number, optionally bounded below."""

    minimum: float | None = None

    def parse(self, text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise Invalid(f"{text!r} is not a number") from None
        if value != value or (self.minimum is not None and value < self.minimum):  # NaN, or below
            raise Invalid(f"{value:g} must be {_bounds(self.minimum, None)}")
        return value

    def describe(self) -> str:
        bounds = _bounds(self.minimum, None)
        return f"number {bounds}" if bounds else "number"


@dataclass(frozen=True)
class Flag(Kind[bool]):
    """``true`` or ``false`` (any case), as Java's and Hive's configuration read them."""

    def parse(self, text: str) -> bool:
        lowered = text.lower()
        if lowered not in ("true", "false"):
            raise Invalid(f"{text!r} is not true or false")
        return lowered == "true"

    def describe(self) -> str:
        return "true or false"


# Hive's time units (MetastoreConf/HiveConf TimeValidator), as seconds.
_UNITS: dict[str, float] = {}
for _names, _seconds in (
    (("d", "day", "days"), 86400.0),
    (("h", "hour", "hours"), 3600.0),
    (("m", "min", "mins", "minute", "minutes"), 60.0),
    (("s", "sec", "secs", "second", "seconds"), 1.0),
    (("ms", "msec", "msecs", "millisecond", "milliseconds"), 1e-3),
    (("us", "usec", "usecs", "microsecond", "microseconds"), 1e-6),
    (("ns", "nsec", "nsecs", "nanosecond", "nanoseconds"), 1e-9),
):
    _UNITS.update(dict.fromkeys(_names, _seconds))
_TIME = re.compile(r"([+-]?\d+(?:\.\d+)?)\s*([a-zA-Z]*)")
_UNIT_WORDS = {1e-3: "milliseconds", 1.0: "seconds", 60.0: "minutes"}


@dataclass(frozen=True)
class Duration(Kind[float]):
    """A time, in seconds: Hive's ``15s``, ``120000ms``, ``2m``, or a bare number in the key's own ``unit``."""

    unit: str = "s"
    #: Zero is refused (a timeout, an interval); otherwise zero is the least.
    positive: bool = False

    def parse(self, text: str) -> float:
        match = _TIME.fullmatch(text)
        unit = match.group(2).lower() if match else ""
        if not match or (unit and unit not in _UNITS):
            raise Invalid(f"{text!r} is not a time such as '15s' or '120000ms'")
        seconds = float(match.group(1)) * _UNITS[unit or self.unit]
        if seconds < 0 or (self.positive and seconds == 0):
            raise Invalid(f"{text!r} must be more than zero" if self.positive else f"{text!r} must not be negative")
        return seconds

    def describe(self) -> str:
        word = _UNIT_WORDS.get(_UNITS[self.unit], self.unit)
        least = "more than zero" if self.positive else "zero or more"
        return f"time, {least}: {word} or with a unit (15s, 2m, 500ms)"


@dataclass(frozen=True)
class Choice(Kind[str]):
    """One of a few words (any case); the value is the word as declared. ``hint`` follows the words in
    messages (``or empty for ...``)."""

    values: tuple[str, ...]
    hint: str = ""

    def parse(self, text: str) -> str:
        for value in self.values:
            if value.lower() == text.lower():
                return value
        raise Invalid(f"{text!r} must be {self.describe()}")

    def describe(self) -> str:
        return alternatives(self.values) + (f" {self.hint}" if self.hint else "")


@dataclass(frozen=True)
class Names(Kind[tuple[str, ...]]):
    """A comma-separated list (blanks around items and empty items are dropped)."""

    items: str = "names"

    def parse(self, text: str) -> tuple[str, ...]:
        return tuple(part.strip() for part in text.split(",") if part.strip())

    def describe(self) -> str:
        return f"comma-separated {self.items}"


_HOST_PORT = re.compile(r"(?:[a-zA-Z][a-zA-Z0-9+.-]*://)?(\[[0-9a-fA-F:.]+\]|[^\s:/\[\],]+)(?::(\d+))?/?")


@dataclass(frozen=True)
class HostPorts(Kind[str]):
    """``host:port`` addresses, comma-separated unless ``single`` (``[v6]:port`` too; a ``scheme://`` prefix is
    kept). The value is the list as written, without blanks."""

    single: bool = False
    #: Every entry must name its port.
    port_required: bool = False

    def parse(self, text: str) -> str:
        entries = [e.strip() for e in text.split(",") if e.strip()]
        if self.single and len(entries) != 1:
            raise Invalid(f"{text!r} is not one host:port")
        for entry in entries:
            match = _HOST_PORT.fullmatch(entry)
            if match is None or (match.group(2) is None and self.port_required):
                raise Invalid(f"{entry!r} is not a host:port such as broker1:9092")
            if match.group(2) is not None and not 0 < int(match.group(2)) < 65536:
                raise Invalid(f"{entry!r}: the port must be between 1 and 65535")
        if not entries:
            raise Invalid(f"{text!r} names no host")
        return ",".join(entries)

    def describe(self) -> str:
        return "host:port" if self.single else "host:port list, comma-separated"


@dataclass(frozen=True)
class Text(Kind[str]):
    """Any text (blanks around it are dropped)."""

    what: str = "text"

    def parse(self, text: str) -> str:
        return text

    def describe(self) -> str:
        return self.what


@dataclass(frozen=True)
class Path(Text):
    """A file or directory path (not checked here: the consumer says what it must be)."""

    what: str = "path"


@dataclass(frozen=True)
class Secret(Text):
    """Text that is never shown: passwords, credentials. ``file:PATH`` and ``env:NAME`` read it from a file or
    an environment variable (:func:`resolve_secret`)."""

    what: str = "secret; or file:PATH, env:NAME"
    secret = True

    def parse(self, text: str) -> str:
        return resolve_secret(text)


@dataclass(frozen=True)
class SecretNames(Names):
    """A comma-separated list that holds secrets (never shown); ``file:PATH``/``env:NAME`` as :class:`Secret`."""

    secret = True

    def parse(self, text: str) -> tuple[str, ...]:
        return super().parse(resolve_secret(text))

    def describe(self) -> str:
        return super().describe() + " (secret; or file:PATH, env:NAME)"


@dataclass(frozen=True)
class Credentials(Kind[tuple[tuple[str, str], ...]]):
    """``scheme:credential`` entries, comma-separated, such as ``digest:user:password`` (kazoo's auth data);
    ``file:PATH``/``env:NAME`` as :class:`Secret`."""

    secret = True

    def parse(self, text: str) -> tuple[tuple[str, str], ...]:
        out = []
        for number, item in enumerate(resolve_secret(text).split(","), 1):
            scheme, sep, credential = item.strip().partition(":")
            if not sep or not scheme or not credential:
                # Not the entry itself: it may hold a password.
                raise Invalid(f"entry {number} is not 'scheme:credential' such as 'digest:user:password'")
            out.append((scheme, credential))
        return tuple(out)

    def describe(self) -> str:
        return "scheme:credential list (secret), such as digest:user:password; or file:PATH, env:NAME"
