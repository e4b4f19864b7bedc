"""Configuration: flat ``key=value`` settings from the app, a file, the environment and flags, with where each
value came from, and the one typed reader of the declared keys (:mod:`hivewire.config._keys`).

Sources, later ones winning: built-in defaults (the declarations), the app's own settings (``code``), a
``.properties``, ``.toml`` or Hadoop ``.xml`` file, environment variables (``APIARY_BOOTSTRAP_SERVERS`` ->
``apiary.bootstrap.servers``, as Spring maps them for Drone Fly), and flags. A key's aliases are looked up
per source: a flag wins over a file whatever spelling each uses, and within one source the name wins over
its aliases, in the declared order (Hive's).

Unknown keys in hivewire's and Drone Fly's namespaces (``hivewire.*``, ``apiary.*``, ``endpoint.*``,
``instance.*``, except pass-through prefixes such as ``apiary.messaging.consumer.*``) are errors with a "did
you mean", when they come from a file, the app or a flag (:meth:`Config.check_keys`). From the environment
they are not: Kubernetes injects ``<SERVICE>_SERVICE_HOST``/``<SERVICE>_PORT`` for every Service, so a Service
named ``hivewire`` would otherwise stop the app; likely typos among them are logged at WARNING. Every unknown
key is reported in one error, each with where it was written (``file:line`` for a file:
:attr:`Provenance.place`); :meth:`Config.problems` adds every invalid value, for ``hivewire check-config``.
"""

from __future__ import annotations

import difflib
import logging
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple, TypeVar, overload

from hivewire.config._files import SettingMap, flatten, key_lines, read_file
from hivewire.config._key import Key, key_of_env
from hivewire.config._keys import CHECKED_NAMESPACES, ENV_PREFIXES, KEYS, find_key, passed_through
from hivewire.config._kinds import Invalid, resolve_secret
from hivewire.errors import ConfigError

log = logging.getLogger("hivewire.config")

T = TypeVar("T")

Source = Literal["default", "code", "file", "environment", "flag"]
_RANK: dict[Source, int] = {"default": 0, "code": 1, "file": 2, "environment": 3, "flag": 4}

# What Kubernetes sets for every Service: never a typo of ours.
_KUBERNETES = re.compile(r".+_(SERVICE_HOST|SERVICE_PORT(_\w+)?|PORT(_\d+_(TCP|UDP|SCTP)(_(PORT|PROTO|ADDR))?)?)")
#: Environment variables of hivewire's tools, not settings (the Java components' cache and the peers'
#: repository of hivewire.tools._jvm, the local services' JVM options of hivewire.tools._local, the native
#: decoder's switch, the Drone Fly tests' JDK): never read as keys.
TOOL_VARIABLES = frozenset(
    {"HIVEWIRE_JVM_CACHE", "HIVEWIRE_PEERS_M2", "HIVEWIRE_JVM_OPTIONS", "HIVEWIRE_NATIVE", "HIVEWIRE_DRONEFLY_JAVA"}
)
# An environment variable this close to a key's is reported as a likely typo.
_TYPO_CUTOFF = 0.9


@dataclass(frozen=True)
class Provenance:
    """Where a setting's value came from.

    ``source`` is the kind of source (``default``, ``code`` for the app's own settings, ``file``,
    ``environment``, ``flag``); ``key`` the dotted key as found there (a key's name or one of its aliases);
    ``written`` how the user wrote it: the environment variable (``APIARY_BOOTSTRAP_SERVERS``), the flag
    (``--port``), else the key; ``file`` the file's path.
    """

    source: Source
    key: str
    written: str = ""
    file: str | None = None
    #: The line of ``file`` the key is set on (None: not from a file, or not found in its text).
    line: int | None = None

    def __post_init__(self) -> None:
        if not self.written:
            object.__setattr__(self, "written", self.key)

    @property
    def place(self) -> str:
        """Where the user wrote the setting, for messages: ``file:line`` (or the file), else :meth:`__str__`."""
        if self.source == "file" and self.file is not None:
            return f"{self.file}:{self.line}" if self.line is not None else self.file
        return str(self)

    @property
    def name(self) -> str:
        """The key as errors name it: as written in a file or in code (an alias too), the flag for a flag, and
        the dotted key for an environment variable."""
        return self.written if self.source == "flag" else self.key

    def __str__(self) -> str:
        if self.source == "default":
            return "default"
        if self.source == "environment":
            return f"environment variable {self.written}"
        if self.source == "flag":
            return "flag " + (self.written if self.written.startswith("-") else f"--set {self.written}")
        where = "the app's settings" if self.source == "code" else f"file {self.file}"
        declared = find_key(self.key)
        return where if declared is None or declared.name == self.key else f"{where} ({self.key})"


class Effective(NamedTuple):
    """One setting as it takes effect: its key, its value as text (secrets masked) and where it came from."""

    key: str
    value: str
    provenance: Provenance


_Entry = tuple[str, Provenance]


class Config(Mapping[str, str]):
    """Immutable flat settings with their provenance. Build one with :meth:`load`; read it like a dict of
    strings, or typed through the declared keys with :meth:`read`.

    ``Config(values)`` holds settings given in code (nested mappings are flattened into dotted keys).
    """

    def __init__(self, values: SettingMap | None = None) -> None:
        self._entries: dict[str, _Entry] = {}
        self._checked = False
        if values is not None:
            given = values._entries if isinstance(values, Config) else None
            for key, value in flatten(values).items():
                self._entries[key] = (value, given[key][1] if given and key in given else Provenance("code", key))

    @classmethod
    def _of(cls, entries: dict[str, _Entry]) -> Config:
        config = cls()
        config._entries = entries
        return config

    @classmethod
    def load(
        cls,
        *,
        file: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        overrides: SettingMap | None = None,
        base: SettingMap | None = None,
        flags: Mapping[str, str] | None = None,
    ) -> Config:
        """Merge ``base`` (the app's settings), ``file``, ``env`` (default: ``os.environ``) and ``overrides``
        (flags). ``flags`` names the flag each override came from (``{"hivewire.shim.listen.port": "--port"}``),
        so that errors and :meth:`provenance` name the flag the user wrote."""
        entries: dict[str, _Entry] = dict(Config(base)._entries) if base is not None else {}
        if file is not None:
            path = Path(file)
            values, lines = read_file(path), key_lines(path)
            entries.update(
                (k, (v, Provenance("file", k, file=str(path), line=lines.get(k)))) for k, v in values.items()
            )
        for name, value in (os.environ if env is None else env).items():
            key = key_of_env(name)
            if key.startswith(ENV_PREFIXES) and name not in TOOL_VARIABLES:
                entries[key] = (value, Provenance("environment", key, written=name))
        named = flags or {}
        for key, value in flatten(overrides or {}).items():
            entries[key] = (value, Provenance("flag", key, written=named.get(key, key)))
        return cls._of(entries)

    def merged(self, overrides: SettingMap, *, source: Literal["code", "flag"] = "flag") -> Config:
        """A copy with ``overrides`` applied (as flags, or as the app's own settings)."""
        entries = dict(self._entries)
        entries.update((k, (v, Provenance(source, k))) for k, v in flatten(overrides).items())
        return Config._of(entries)

    @property
    def env_keys(self) -> frozenset[str]:
        """The keys whose value came from an environment variable (not overridden by a flag)."""
        return frozenset(k for k, (_, p) in self._entries.items() if p.source == "environment")

    # -- Mapping ----------------------------------------------------------------------------------------------
    def __getitem__(self, key: str) -> str:
        return self._entries[key][0]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        shown = {k: ("***" if _secret(k) else v) for k, (v, _) in sorted(self._entries.items())}
        return f"Config({shown})"

    def with_prefix(self, prefix: str) -> dict[str, str]:
        """The settings under ``prefix`` (e.g. ``apiary.messaging.consumer.``), with the prefix removed; secrets
        (``sasl.password``, ...) given as ``file:PATH`` or ``env:NAME`` are read from there."""
        out = {}
        for k, (v, provenance) in self._entries.items():
            if k.startswith(prefix) and k != prefix:
                try:
                    out[k[len(prefix) :]] = resolve_secret(v) if _secret(k) else v
                except Invalid as e:
                    raise ConfigError(provenance.name, str(e)) from None
        return out

    # -- the typed reader -------------------------------------------------------------------------------------
    def find(self, key: Key[object]) -> tuple[str, Provenance] | None:
        """The text given for ``key`` (blanks count as unset) and where it came from, or None.

        The latest source wins; within one source the key's name, then its aliases in their order.
        """
        best: _Entry | None = None
        for spelling in key.spellings:
            entry = self._entries.get(spelling)
            if entry is None or not entry[0].strip():
                continue
            if best is None or _RANK[entry[1].source] > _RANK[best[1].source]:
                best = entry
        return None if best is None else (best[0].strip(), best[1])

    @overload
    def read(self, key: Key[T]) -> T: ...
    @overload
    def read(self, key: str) -> object: ...
    def read(self, key: Key[T] | str) -> T | object:
        """The value of ``key`` (a declaration, or a declared key's name): the one given, else the default.

        Raises :class:`~hivewire.errors.ConfigError` naming the key as the user wrote it (an alias, or the flag)
        and saying what is expected, or that it is required.
        """
        return self._read(_declared(key)) if isinstance(key, str) else self._read(key)

    def _read(self, key: Key[T]) -> T:
        value = self.optional(key)
        if value is None:
            where = f"set {key.name} in the configuration file or the environment variable {key.env}"
            raise ConfigError(key.name, f"is required: {where}")
        return value

    def optional(self, key: Key[T]) -> T | None:
        """The value of ``key``: the one given, else the default, else None."""
        found = self.find(key)
        if found is None:
            return None if key.default is None else key.kind.parse(key.default)
        text, provenance = found
        try:
            return key.kind.parse(text)
        except Invalid as e:
            raise ConfigError(provenance.name, str(e)) from None

    def provenance(self, key: Key[object] | str) -> Provenance:
        """Where the value of ``key`` comes from (``default`` when it is not set)."""
        if isinstance(key, str) and find_key(key) is None:
            entry = self._entries.get(key)
            return entry[1] if entry is not None else Provenance("default", key)
        declared = _declared(key) if isinstance(key, str) else key
        found = self.find(declared)
        return found[1] if found is not None else Provenance("default", declared.name)

    def effective(self) -> list[Effective]:
        """Every declared key that has a value (given, or a default) and every pass-through setting, in the
        order of the reference, secrets masked: what ``hivewire check-config`` shows."""
        out = []
        for key in KEYS:
            found = self.find(key)
            if found is None and key.default is None:
                continue
            text, provenance = found if found is not None else (key.default or "", Provenance("default", key.name))
            out.append(Effective(key.name, "***" if key.secret else text, provenance))
        for name, (value, provenance) in self._entries.items():
            if passed_through(name) is not None:
                out.append(Effective(name, "***" if _secret(name) else value, provenance))
        return out

    # -- unknown keys -----------------------------------------------------------------------------------------
    def check_keys(self) -> None:
        """Refuse unknown keys in hivewire's and Drone Fly's namespaces, with a "did you mean"; log those from
        the environment instead (likely typos at WARNING). Checked once per configuration."""
        if self._checked:
            return
        unknown = self._unknown_keys()
        from_env = [p.written for _, p in unknown if p.source == "environment"]
        ignored = []
        for variable in sorted(from_env):
            close = None if _KUBERNETES.fullmatch(variable) else _closest(key_of_env(variable), _TYPO_CUTOFF)
            if close is None:
                ignored.append(variable)
            else:
                log.warning(
                    "environment variable %s is not a hivewire setting and is ignored; did you mean %s (%s)?",
                    variable,
                    close.env,
                    close.name,
                )
        if ignored:
            log.info("ignoring environment variables that are not hivewire settings: %s", ", ".join(ignored))
        refuse(self._unknown(unknown))
        self._checked = True

    def _unknown_keys(self) -> list[tuple[str, Provenance]]:
        """The keys set that no declaration knows: any in hivewire's and Drone Fly's namespaces; of other
        programs' keys (a hive-site.xml holds hundreds), only one given as a flag (``--set``) that is close to a
        key hivewire reads (``metastore.uris`` for ``metastore.thrift.uris``): a typo, not Hive's setting."""
        return sorted(
            (k, p)
            for k, (_, p) in self._entries.items()
            if find_key(k) is None
            and passed_through(k) is None
            and (k.startswith(CHECKED_NAMESPACES) or (p.source == "flag" and _closest(k, 0.8, anywhere=True)))
        )

    @staticmethod
    def _unknown(unknown: list[tuple[str, Provenance]]) -> list[tuple[Provenance, str]]:
        out = []
        for key, provenance in unknown:
            if provenance.source != "environment":
                checked = key.startswith(CHECKED_NAMESPACES)
                close = _closest(key, 0.6 if checked else 0.8, anywhere=not checked)
                hint = f"; did you mean {close.name}?" if close else "; docs/configuration.md lists the keys"
                out.append((provenance, "unknown setting" + hint))
        return out

    def problems(self) -> list[tuple[Provenance, str]]:
        """Every unknown key (from a file, the app or a flag) and every invalid value of a declared key, each
        with where it was written: what ``hivewire check-config`` reports in one run."""
        out = self._unknown(self._unknown_keys())
        for key in KEYS:
            found = self.find(key)
            if found is not None:
                try:
                    key.kind.parse(found[0])
                except Invalid as e:
                    out.append((found[1], str(e)))
        return sorted(out, key=lambda p: (p[0].file or "", p[0].line or 0))


def refuse(problems: list[tuple[Provenance, str]]) -> None:
    """Raise one :class:`~hivewire.errors.ConfigError` for all of ``problems`` (nothing if there are none): one
    names its key, with ``(file:line)`` when from a file; several are listed a line each, ``place: key: problem``."""
    if len(problems) == 1:
        provenance, message = problems[0]
        where = f" ({provenance.place})" if provenance.source == "file" else ""
        raise ConfigError(provenance.name, message + where)
    if problems:
        # a flag's place names it already ("flag --endpoint-port"); others get the key as written
        lines = [
            f"{p.place}: {message}" if p.source == "flag" else f"{p.place}: {p.name}: {message}"
            for p, message in problems
        ]
        raise ConfigError(f"{len(problems)} problems in the settings", "one a line\n  " + "\n  ".join(lines))


def _declared(key: str) -> Key[object]:
    found = find_key(key)
    if found is None:
        close = _closest(key, 0.6)
        raise ConfigError(key, "no such key" + (f"; did you mean {close.name}?" if close else ""))
    return found


def _closest(name: str, cutoff: float, *, anywhere: bool = False) -> Key[object] | None:
    """The declared key ``name`` most likely misspells, if any is at least ``cutoff`` similar (of the keys in
    hivewire's and Drone Fly's namespaces, or ``anywhere``: Hive's spellings too)."""
    spellings = [s for key in KEYS for s in key.spellings if anywhere or s.startswith(CHECKED_NAMESPACES)]
    match = difflib.get_close_matches(name, spellings, n=1, cutoff=cutoff)
    return find_key(match[0]) if match else None


def _secret(key: str) -> bool:
    declared = find_key(key)
    if declared is not None:
        return declared.secret
    return any(word in key for word in ("password", "secret", "jaas", "token", "credentials"))
