"""The registry the section modules declare their keys into, in the order of the reference.

A section module calls :func:`section` once, then :func:`key` and :func:`prefix` for each of its keys;
``hivewire.config._keys`` imports the section modules in the reference's order, so :data:`KEYS`,
:data:`PREFIXES` and :data:`SECTIONS` are in that order once it has been imported.
"""

from __future__ import annotations

from typing import TypeVar

from hivewire.config._key import Key, Prefix, Section
from hivewire.config._kinds import Kind

T = TypeVar("T")

#: Every key, in the order of the reference.
KEYS: list[Key[object]] = []
#: Prefixes whose keys are passed through to a library.
PREFIXES: list[Prefix] = []
#: The sections of the reference, in order.
SECTIONS: list[Section] = []

#: Namespaces whose unknown keys are errors (a typo): hivewire's own and Drone Fly's. Keys of other programs
#: (``hive.*``, ``metastore.*``, a listener's own settings) are not checked.
CHECKED_NAMESPACES = ("hivewire.", "apiary.", "endpoint.", "instance.")

#: Environment variables whose dotted form starts with one of these are read as settings.
ENV_PREFIXES = ("apiary.", "instance.", "endpoint.", "hivewire.", "metastore.", "hive.metastore.", "hive.zookeeper.")


def section(title: str, intro: str) -> Section:
    """A new section of the reference, after the ones declared before it."""
    declared = Section(title, intro)
    SECTIONS.append(declared)
    return declared


def key(
    section: Section,
    name: str,
    kind: Kind[T],
    doc: str,
    *,
    default: str | None = None,
    default_doc: str | None = None,
    aliases: tuple[str, ...] = (),
) -> Key[T]:
    """A key of ``section``, declared once: its name, kind, doc, default (or what stands for it) and aliases."""
    declared = Key(name, kind, doc, section, default, default_doc, aliases)
    KEYS.append(declared)
    return declared


def prefix(section: Section, name: str, doc: str) -> Prefix:
    """A prefix of ``section`` whose keys are passed through to a library as written after it."""
    declared = Prefix(name, doc, section)
    PREFIXES.append(declared)
    return declared
