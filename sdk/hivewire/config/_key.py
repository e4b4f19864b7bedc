"""A configuration key's declaration: its name, kind, default, one-line doc, aliases and environment form."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from hivewire.config._kinds import Kind

T_co = TypeVar("T_co", covariant=True)


def env_name(key: str) -> str:
    """The environment variable of a dotted key, as Spring maps them for Drone Fly: ``APIARY_BOOTSTRAP_SERVERS``."""
    return key.upper().replace(".", "_").replace("-", "")


def key_of_env(variable: str) -> str:
    """The dotted key of an environment variable: ``APIARY_BOOTSTRAP_SERVERS`` -> ``apiary.bootstrap.servers``."""
    return variable.lower().replace("_", ".")


@dataclass(frozen=True)
class Section:
    """A group of keys in the configuration reference (``docs/configuration.md``)."""

    title: str
    intro: str


@dataclass(frozen=True, eq=False)
class Key(Generic[T_co]):
    """One configuration key, declared once (in :mod:`hivewire.config._keys`).

    ``default`` is written as a user would write it (``"120000ms"``), and parsed by ``kind`` like any value;
    None means no value unless one is given. ``default_doc`` describes a default the consumer computes
    (``<topic>.dlq``), and is what the reference shows when given. ``aliases`` are other spellings, looked up
    after ``name`` in this order (Hive's: ``metastore.*``, then ``hive.metastore.*``, then ``hive.*``). Keys
    compare by identity.
    """

    name: str
    kind: Kind[T_co]
    doc: str
    section: Section
    default: str | None = None
    default_doc: str | None = None
    aliases: tuple[str, ...] = ()
    env: str = field(default="")

    def __post_init__(self) -> None:
        if not self.env:
            object.__setattr__(self, "env", env_name(self.name))

    @property
    def spellings(self) -> tuple[str, ...]:
        """The name and the aliases, in lookup order."""
        return (self.name, *self.aliases)

    @property
    def secret(self) -> bool:
        return self.kind.secret

    def __repr__(self) -> str:
        return f"Key({self.name!r})"


@dataclass(frozen=True)
class Prefix:
    """Keys under ``name`` (which ends with a dot) are passed through to a library, not declared one by one."""

    name: str
    doc: str
    section: Section
