"""What the upstream metastore is (:class:`Release`): what it fills in or changes in the objects it stores and
fires, so the shim's events carry the same.

Invariants: learned once per shim, on the shim's own read connections, the first time a change needs it
(:func:`learn`: three calls at most, never again once one answer came): ``get_catalogs`` (Hive 3.0+ has
catalogs; 2.x answers "Invalid method name"), ``get_config_value("metastore.catalog.default")`` (the
catalog Hive 3+ gives an object whose client left it unset) and fb303 ``getVersion`` (Hive 4 answers its
release, ``4.0.1``; 2.3 and 3.1 answer ``3.0``, so it only tells 4.x apart). The upstream URIs of one shim
are one metastore service (one release); a failover to another release is not noticed.

What each release does to the objects its events carry, beyond what 2.3 does:

* 3.0+: an unset catalog (``catName``, ``catalogName``) becomes the default catalog, and an insert's event
  names its table as stored (lower case), not as the request did;
* 4.x also: a new database gets a ``createTime``, and an owner (the metastore's user) when it has none; a
  new table its ``id``, and Hive 4's ``MetastoreDefaultTransformer`` may turn a managed table into an
  external one (``tableType``, parameters); an alter sent without an environment context fires an empty one.
  Those values come from the stored object, read back after a create (a create is read back on every
  release already: one ``get_database`` or ``get_table_req`` per create, no more).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from hivewire.errors import MetastoreServerError, UnsupportedMethodError
from hivewire.metastore import MetastoreClient
from hivewire.metastore._release import is_hive4

__all__ = ["HIVE_2", "Release", "learn"]

log = logging.getLogger(__name__)

#: The key of Hive 3+'s default catalog (``MetastoreConf.ConfVars.CATALOG_DEFAULT``) and its default value.
CATALOG_DEFAULT = "metastore.catalog.default"
_DEFAULT_CATALOG = "hive"


@dataclass(frozen=True)
class Release:
    """What the upstream metastore fills in: ``catalog`` is its default catalog (None: no catalogs, Hive 2.x);
    ``fills_new_objects`` is true for Hive 4+ (ids, ``createTime``, owners, table translation)."""

    catalog: str | None = None
    fills_new_objects: bool = False
    version: str = ""

    def with_catalog(self, obj: Any) -> Any:
        """``obj`` (a Table, Partition or Database, changed in place) with the default catalog if it had none
        and the metastore has catalogs; ``obj`` itself."""
        if self.catalog is None or obj is None:
            return obj
        field = "catalogName" if hasattr(obj, "catalogName") else "catName"
        if hasattr(obj, field) and getattr(obj, field) is None:
            setattr(obj, field, self.catalog)
        return obj


#: What a Hive 2.x metastore does (and what the shim assumes while it cannot ask).
HIVE_2 = Release()


def learn(client: MetastoreClient) -> Release:
    """Ask the metastore ``client`` talks to what it is (see the module docstring)."""
    try:
        client.call("get_catalogs")
    except UnsupportedMethodError:
        return HIVE_2
    try:
        catalog = str(client.call("get_config_value", CATALOG_DEFAULT, _DEFAULT_CATALOG) or _DEFAULT_CATALOG)
    except MetastoreServerError:  # the key is not readable there: Hive's own default
        catalog = _DEFAULT_CATALOG
    version = str(client.call("getVersion") or "")
    release = Release(catalog=catalog, fills_new_objects=is_hive4(version), version=version)
    log.info(
        "upstream metastore: version %s, default catalog %r%s",
        version or "?",
        catalog,
        "; it fills in new objects (Hive 4)" if release.fills_new_objects else "",
    )
    return release
