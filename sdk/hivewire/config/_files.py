"""Configuration files: Java ``.properties`` (Drone Fly's), ``.toml``, and Hadoop XML (``hive-site.xml``).

YAML and JSON files are refused with a message saying what to use instead: a Spring ``application.yml`` read
as properties would fail with an unrelated message, or worse, set nothing.

:func:`key_lines` finds the line each key is set on, so that every problem with a file names ``file:line``;
it reads the text line by line and never decides a value (the parsers above do), so a line it cannot place
only leaves the key without a line number.
"""

from __future__ import annotations

import os
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import TypeAlias

import javaproperties

from hivewire.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

#: A value in a TOML file or in settings given from Python: nested tables are flattened into dotted keys,
#: lists joined with commas, booleans written ``true``/``false``.
SettingValue: TypeAlias = (
    str | int | float | bool | os.PathLike[str] | list["SettingValue"] | tuple["SettingValue", ...] | None
)
#: Settings given from Python: dotted keys, or nested mappings of their parts (as TOML tables are).
SettingMap: TypeAlias = Mapping[str, "SettingValue | SettingMap"]

_REFUSED = {
    ".yaml": "YAML",
    ".yml": "YAML",
    ".json": "JSON",
}


def flatten(values: SettingMap, prefix: str = "", out: dict[str, str] | None = None) -> dict[str, str]:
    """Nested mappings as dotted keys, values as text (None values are left out: unset)."""
    out = {} if out is None else out
    for name, value in values.items():
        key = f"{prefix}.{name}" if prefix else str(name)
        if isinstance(value, Mapping):
            flatten(value, key, out)
        elif value is None:
            continue
        elif isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, (list, tuple)):
            out[key] = ",".join(str(v) for v in value)
        else:
            out[key] = os.fspath(value) if isinstance(value, os.PathLike) else str(value)
    return out


def read_file(path: Path) -> dict[str, str]:
    """The settings in ``path``, by its suffix: ``.toml``, ``.xml`` (Hadoop), anything else Java properties."""
    kind = _REFUSED.get(path.suffix.lower())
    if kind is not None:
        raise ConfigError(
            "--config",
            f"{path} is a {kind} file; hivewire reads .properties, .toml and Hadoop .xml files. Write the "
            "settings as properties (Spring's `apiary: {bootstrap: {servers: b:9092}}` is "
            "`apiary.bootstrap.servers=b:9092`) or as TOML",
        )
    if path.suffix.lower() == ".xml":
        return load_hive_site(path)
    try:
        if path.suffix.lower() == ".toml":
            with path.open("rb") as f:
                return flatten(tomllib.load(f))
        with path.open(encoding="utf-8") as f:
            return dict(javaproperties.load(f))
    except FileNotFoundError as e:
        raise ConfigError("--config", f"no such file: {path}") from e
    except (OSError, ValueError, tomllib.TOMLDecodeError) as e:
        raise ConfigError("--config", f"cannot read {path}: {e}") from e


def load_hive_site(path: str | os.PathLike[str]) -> dict[str, str]:
    """The ``<property><name>/<value>`` pairs of a Hadoop-style XML file such as ``hive-site.xml``.

    ``${key}`` and ``${env.NAME}`` references are expanded, as Hadoop's Configuration does.
    """
    file = Path(path)
    try:
        root = ET.parse(file).getroot()
    except OSError as e:
        raise ConfigError(str(file), f"cannot read it ({e.strerror or e})") from e
    except ET.ParseError as e:
        raise ConfigError(str(file), f"is not valid XML ({e})") from e
    conf: dict[str, str] = {}
    for prop in root.iter("property"):
        name, value = prop.findtext("name"), prop.findtext("value")
        if name and name.strip():
            conf[name.strip()] = (value or "").strip()
    return _expand(conf)


_VARIABLE = re.compile(r"\$\{([^}$]+)\}")


def _expand(conf: dict[str, str]) -> dict[str, str]:
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name.startswith("env."):
            return os.environ.get(name[4:], match.group(0))
        return conf.get(name, match.group(0))

    out = dict(conf)
    for key, value in conf.items():
        for _ in range(20):  # Hadoop's bound on nested substitutions
            expanded = _VARIABLE.sub(one, value)
            if expanded == value:
                break
            value = expanded
        out[key] = value
    return out


_PROPERTY_KEY = re.compile(r"\s*((?:\\.|[^=:\s\\])+)")
_TOML_TABLE = re.compile(r"\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$")
_TOML_KEY = re.compile(r"\s*([A-Za-z0-9_.\-\"' ]+?)\s*=")
_XML_NAME = re.compile(r"<name>\s*([^<]+?)\s*</name>")


def key_lines(path: Path) -> dict[str, int]:
    """The line (from 1) each key of the file at ``path`` is set on (the last, as for the value); keys it cannot
    place are left out. Never raises: a file that cannot be read has no lines to name."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    suffix = path.suffix.lower()
    out: dict[str, int] = {}
    table = ""
    continued = False
    for number, line in enumerate(text.splitlines(), 1):
        if suffix == ".xml":
            for name in _XML_NAME.findall(line):
                out[name] = number
            continue
        if suffix == ".toml":
            header = _TOML_TABLE.match(line)
            if header is not None:
                table = _toml_key(header.group(1)) + "."
                continue
            found = _TOML_KEY.match(line)
            if found is not None and not line.lstrip().startswith("#"):
                out[table + _toml_key(found.group(1))] = number
            continue
        stripped = line.lstrip()
        was_continued, continued = continued, (len(line) - len(line.rstrip("\\"))) % 2 == 1
        if was_continued or not stripped or stripped[0] in "#!":
            continue
        match = _PROPERTY_KEY.match(line)
        if match is not None:
            out[javaproperties.unescape(match.group(1))] = number
    return out


def _toml_key(text: str) -> str:
    return ".".join(part.strip().strip("\"'") for part in text.split("."))
