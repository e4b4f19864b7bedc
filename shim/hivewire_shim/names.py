"""Metastore names the way Hive spells them: partition names (escaped), catalog-prefixed database names."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["DEFAULT_PARTITION_NAME", "database_key", "partition_name", "partition_spec", "split_catalog", "table_key"]

#: Hive's name for a partition whose value is null or empty (``hive.exec.default.partition.name``).
DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"

# FileUtils.charToEscape (non-Windows): control characters and "#%'*/:=?\\{[]^, plus DEL.
_ESCAPED = frozenset([*range(0x01, 0x20), *map(ord, "\"#%'*/:=?\\\x7f{[]^")])


def _escape(text: str) -> str:
    """Hive's ``FileUtils.escapePathName``: the characters above as ``%XX`` (upper-case hex)."""
    if not any(ord(c) in _ESCAPED for c in text):
        return text
    return "".join(f"%{ord(c):02X}" if ord(c) in _ESCAPED else c for c in text)


def _unescape(text: str) -> str:
    """Hive's ``FileUtils.unescapePathName``: ``%XX`` back to the character (malformed ones are kept)."""
    if "%" not in text:
        return text
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "%" and _is_hex(text[i + 1 : i + 3]):
            out.append(chr(int(text[i + 1 : i + 3], 16)))
            i += 3
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _is_hex(text: str) -> bool:
    return len(text) == 2 and all(c in "0123456789abcdefABCDEF" for c in text)


def partition_name(keys: Sequence[str], values: Sequence[str | None]) -> str:
    """``Warehouse.makePartName``: ``dt=2024-01-01/country=NL`` with Hive's escaping and lower-case keys.

    This is the name ``get_partitions_by_names`` matches against (the metastore stores it escaped).
    """
    if len(keys) != len(values):
        raise ValueError(f"{len(keys)} partition keys but {len(values)} values")
    return "/".join(
        f"{_escape(k.lower())}={_escape(v) if v else DEFAULT_PARTITION_NAME}" for k, v in zip(keys, values, strict=True)
    )


def partition_spec(name: str) -> dict[str, str]:
    """``Warehouse.makeSpecFromName``: ``"dt=2024-01-01/country=NL"`` -> ``{"dt": ..., "country": ...}``."""
    spec: dict[str, str] = {}
    for part in name.split("/"):
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"{name!r} is not a partition name (key=value/key=value)")
        spec[_unescape(key)] = _unescape(value)
    return spec


def split_catalog(db_name: str) -> tuple[str | None, str]:
    """A Hive 3+ client's ``@catalog#database`` -> ``(catalog, database)``; plain names -> ``(None, name)``."""
    if db_name.startswith("@") and "#" in db_name:
        catalog, _, db = db_name[1:].partition("#")
        return catalog, "" if db == "!" else db
    return None, db_name


def table_key(db_name: str, table_name: str) -> str:
    """What serialises changes to one table (the metastore's names are case-insensitive)."""
    return f"table:{split_catalog(db_name)[1].lower()}.{table_name.lower()}"


def database_key(db_name: str) -> str:
    return f"database:{split_catalog(db_name)[1].lower()}"
