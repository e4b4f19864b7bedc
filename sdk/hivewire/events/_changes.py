"""What an ALTER changed between the old and the new table (or partition): columns added, removed and
retyped, parameters added, removed and changed, and the location. The notebook's HTML and the Arrow columns
``columns_added`` ... ``old_location`` show these; renames are the events' own (``old_name``/``new_name``).
"""

from __future__ import annotations

from typing import NamedTuple

from hivewire_thrift.hive_metastore.ttypes import FieldSchema, Partition, Table

#: Parameters the metastore rewrites on every ALTER by itself: left out of :attr:`Changes.parameters`.
VOLATILE_PARAMETERS = frozenset({"transient_lastDdlTime", "last_modified_by", "last_modified_time"})


class Column(NamedTuple):
    name: str | None
    type: str | None
    comment: str | None


class Retyped(NamedTuple):
    name: str
    old_type: str | None
    new_type: str | None


class ParameterChange(NamedTuple):
    """A parameter added (``old`` None), removed (``new`` None) or changed."""

    key: str
    old: str | None
    new: str | None


class Changes(NamedTuple):
    columns_added: list[Column]
    columns_removed: list[Column]
    columns_retyped: list[Retyped]
    parameters: list[ParameterChange]
    old_location: str | None
    new_location: str | None

    def facts(self) -> dict[str, str | list[str]]:
        """The changes as display facts (only those that happened)."""
        facts: dict[str, str | list[str]] = {}
        if self.columns_added:
            facts["columns added"] = [f"{c.name} {c.type}" for c in self.columns_added]
        if self.columns_removed:
            facts["columns removed"] = [f"{c.name} {c.type}" for c in self.columns_removed]
        if self.columns_retyped:
            facts["columns retyped"] = [f"{c.name}: {c.old_type} -> {c.new_type}" for c in self.columns_retyped]
        if self.parameters:
            facts["parameters"] = [
                f"+{p.key}={p.new}"
                if p.old is None
                else f"-{p.key}"
                if p.new is None
                else f"{p.key}: {p.old} -> {p.new}"
                for p in self.parameters
            ]
        if self.old_location != self.new_location:
            facts["previous location"] = str(self.old_location)
        return facts


def _parameter(p: ParameterChange) -> str:
    if p.old is None:
        return f"+{p.key}={p.new}"
    if p.new is None:
        return f"-{p.key}"
    return f"{p.key}: {p.old} -> {p.new}"


def _columns(obj: Table | Partition | None) -> list[FieldSchema]:
    sd = getattr(obj, "sd", None)
    # a null item (Java's list held one: Apiary's JSON keeps it) names no column
    return [c for c in getattr(sd, "cols", None) or () if c is not None]


def changes(old: Table | Partition | None, new: Table | Partition | None) -> Changes:
    """What changed from ``old`` to ``new`` (two tables, or two partitions). Columns match by name
    (case-insensitive, as Hive's are); a column renamed shows as one removed and one added."""
    before = {(c.name or "").lower(): c for c in _columns(old)}
    after = {(c.name or "").lower(): c for c in _columns(new)}
    added = [Column(c.name, c.type, c.comment) for k, c in after.items() if k not in before]
    removed = [Column(c.name, c.type, c.comment) for k, c in before.items() if k not in after]
    retyped = [
        Retyped(c.name or k, before[k].type, c.type)
        for k, c in after.items()
        if k in before and (before[k].type or "").lower() != (c.type or "").lower()
    ]
    old_params = dict(getattr(old, "parameters", None) or {})
    new_params = dict(getattr(new, "parameters", None) or {})
    parameters = [
        ParameterChange(k, old_params.get(k), new_params.get(k))
        for k in sorted(old_params.keys() | new_params.keys())
        if k not in VOLATILE_PARAMETERS and old_params.get(k) != new_params.get(k)
    ]
    old_location = getattr(getattr(old, "sd", None), "location", None)
    new_location = getattr(getattr(new, "sd", None), "location", None)
    return Changes(added, removed, retyped, parameters, old_location, new_location)
