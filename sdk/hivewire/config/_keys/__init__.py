"""Every configuration key hivewire reads, declared once: name, kind, default, doc, aliases, environment form.

The consumers read them through :meth:`hivewire.config.Config.read` into small frozen settings objects (the
runtime's, ZooKeeper discovery's, the metastore client's, the shim's, the archive's, the register sidecar's);
``docs/configuration.md`` is rendered from this package (:func:`hivewire.config._reference.render`).

To add a key: declare it in its section's module with ``_key`` (:func:`hivewire.config._keys._registry.key`),
read it in the consumer's ``from_config``, map a flag to it in its command's ``FLAGS`` table
(``hivewire/tools/_cli/_<command>.py``) if the command line should set it, and regenerate the reference
(``python -m hivewire.config._reference docs/configuration.md``).
"""

from __future__ import annotations

# One module per section of the reference, in its order: importing them declares their keys, in that order,
# into the registry. The star imports make this package the one place consumers read keys from
# (``from hivewire.config import _keys as keys``). They also bring the kinds a section imports (Text, ...) at
# run time; a type checker sees only the declarations, and nothing reads the kinds from here.
# isort: off
from hivewire.config._keys._kafka import *  # noqa: F403
from hivewire.config._keys._runtime import *  # noqa: F403
from hivewire.config._keys._metastore import *  # noqa: F403
from hivewire.config._keys._zookeeper import *  # noqa: F403
from hivewire.config._keys._coordination import *  # noqa: F403
from hivewire.config._keys._notification import *  # noqa: F403
from hivewire.config._keys._shim import *  # noqa: F403
from hivewire.config._keys._archive import *  # noqa: F403
from hivewire.config._keys._spark import *  # noqa: F403
from hivewire.config._keys._register import *  # noqa: F403

# isort: on
from hivewire.config._key import Key, Prefix
from hivewire.config._keys._registry import CHECKED_NAMESPACES as CHECKED_NAMESPACES
from hivewire.config._keys._registry import ENV_PREFIXES as ENV_PREFIXES
from hivewire.config._keys._registry import KEYS as KEYS
from hivewire.config._keys._registry import PREFIXES as PREFIXES
from hivewire.config._keys._registry import SECTIONS as SECTIONS

BY_SPELLING: dict[str, Key[object]] = {spelling: key for key in KEYS for spelling in key.spellings}
"""Every key by its name and by each alias."""


def find_key(name: str) -> Key[object] | None:
    """The key ``name`` is a spelling of (its name or an alias), or None."""
    return BY_SPELLING.get(name)


def passed_through(name: str) -> Prefix | None:
    """The pass-through prefix ``name`` is under, or None."""
    return next((p for p in PREFIXES if name.startswith(p.name) and len(name) > len(p.name)), None)
