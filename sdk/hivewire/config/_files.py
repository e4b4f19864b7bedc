"""Configuration files: Java ``.properties`` (Drone Fly's), ``.toml``, and Hadoop XML (``hive-site.xml``).

YAML and JSON files are refused with a message saying what to use instead: a Spring ``application.yml`` read
as properties would fail with an unrelated message, or worse, set nothing.
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
