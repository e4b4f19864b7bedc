"""Spark helpers: SparkSessions pointed at live metastores, and metastore events as DataFrames.

``pyspark`` is imported inside the functions, so this module imports without it; a missing pyspark raises
:class:`~hivewire.errors.PrerequisiteError` naming the extra to install (``hivewire[spark]``).
"""

from __future__ import annotations

import logging
import os
import random
from typing import Any

log = logging.getLogger(__name__)

# -- Sessions on discovered metastores: builder(), session() ------------------------------------------

METASTORE_URIS_CONF = "spark.hadoop.hive.metastore.uris"
"""The Spark setting that hands ``hive.metastore.uris`` to Spark's built-in Hive client."""


def _spark_session_class() -> Any:
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:
        from hivewire.errors import PrerequisiteError

        raise PrerequisiteError(
            "hivewire.spark needs pyspark, which is not installed: pip install 'hivewire[spark]'"
        ) from e
    return SparkSession


def _resolve_metastores(zookeeper: str | None, namespace: str, uris: str | list[str] | None,
                        hive_site: str | os.PathLike[str] | None) -> tuple[list[str], bool]:
    """(metastore URIs, discovered?) from exactly one of the three sources."""
    from hivewire import discovery
    from hivewire.errors import ConfigError
    from hivewire.metastore import parse_uris

    given = [name for name, value in (("zookeeper", zookeeper), ("uris", uris), ("hive_site", hive_site))
             if value is not None]
    if len(given) != 1:
        raise ConfigError("metastore", "give exactly one of zookeeper='zk1:2181,...', uris='thrift://h:9083' or "
                                       f"hive_site='/path/hive-site.xml' (got {', '.join(given) or 'none'})")
    if uris is not None:
        return parse_uris(uris), False
    if zookeeper is not None:
        found = discovery.discover_metastores(zookeeper, namespace)
    else:
        assert hive_site is not None
        conf = discovery.load_conf(hive_site)
        if discovery.discovery_mode(conf) != "zookeeper":
            static = discovery.metastore_uris_from_conf(conf)
            assert isinstance(static, list)
            return static, False
        found = discovery.discover_metastores(discovery.DiscoveryConfig.from_conf(conf))
    # Hive's default RANDOM selection: spread sessions over the live metastores.
    random.shuffle(found)
    return found, True


def _builder(metastores: list[str], app_name: str, master: str | None, conf: dict[str, str] | None) -> Any:
    spark_session = _spark_session_class()
    # A fresh Builder: on older pyspark ``SparkSession.builder`` is one shared object that keeps options.
    b = spark_session.Builder().appName(app_name)
    if master is not None:
        b = b.master(master)
    for key, value in (conf or {}).items():
        b = b.config(key, value)
    return b.config(METASTORE_URIS_CONF, ",".join(metastores)).enableHiveSupport()


def builder(*, zookeeper: str | None = None, namespace: str = "hive_metastore", uris: str | list[str] | None = None,
            hive_site: str | os.PathLike[str] | None = None, app_name: str = "hivewire", master: str | None = None,
            conf: dict[str, str] | None = None) -> Any:
    """A ``SparkSession.Builder`` with Hive support, pointed at the metastores.

    Give one of: ``zookeeper`` (quorum; the live metastores under ``/<namespace>``, shuffled), ``uris``
    (explicit ``thrift://`` URIs) or ``hive_site`` (a ``hive-site.xml``, with or without ZooKeeper discovery;
    its own namespace applies). ``conf`` holds more Spark settings. The URIs are resolved now: call
    ``.getOrCreate()`` soon, or use :func:`session`.
    """
    metastores, _ = _resolve_metastores(zookeeper, namespace, uris, hive_site)
    return _builder(metastores, app_name, master, conf)


def _running_session(spark_session: Any) -> Any:
    """The session ``getOrCreate()`` would return: this thread's active one, else the default one."""
    active = spark_session.getActiveSession()
    if active is not None:
        return active
    default = getattr(spark_session, "_instantiatedSession", None)
    if default is not None and getattr(default.sparkContext, "_jsc", None) is not None:
        return default
    return None


def _session_metastores(spark: Any) -> tuple[str, list[str]]:
    """(catalog implementation, metastore URIs) of a running session."""
    from hivewire.errors import HivewireError
    from hivewire.metastore import parse_uris

    catalog = spark.conf.get("spark.sql.catalogImplementation", "in-memory")
    text = spark.sparkContext.getConf().get(METASTORE_URIS_CONF)
    if not text:  # set another way (hive-site.xml on the classpath): ask the Hadoop configuration
        text = spark.sparkContext._jsc.hadoopConfiguration().get("hive.metastore.uris")
    try:
        return catalog, parse_uris(text or "")
    except HivewireError:
        return catalog, []


def session(*, zookeeper: str | None = None, namespace: str = "hive_metastore", uris: str | list[str] | None = None,
            hive_site: str | os.PathLike[str] | None = None, app_name: str = "hivewire", master: str | None = None,
            conf: dict[str, str] | None = None) -> Any:
    """``builder(...).getOrCreate()``, safe in notebooks.

    A session that is already running is returned when it uses the Hive catalog and the same metastores
    (explicit URIs: the same set; discovered: at least one of the live ones), and ``conf`` is not applied to
    it. A running session pointed elsewhere raises :class:`~hivewire.errors.HivewireError`: its metastore is
    fixed when it starts, and Spark would otherwise hand it back silently.
    """
    from hivewire.errors import HivewireError

    spark_session = _spark_session_class()
    metastores, discovered = _resolve_metastores(zookeeper, namespace, uris, hive_site)
    running = _running_session(spark_session)
    if running is not None:
        catalog, current = _session_metastores(running)
        same = set(current) & set(metastores) if discovered else set(current) == set(metastores)
        if catalog == "hive" and same:
            log.info("reusing the running SparkSession (metastores %s)", ", ".join(current))
            return running
        raise HivewireError(
            f"a SparkSession is already running with catalog {catalog!r} and metastores "
            f"{', '.join(current) or 'none'}, not {', '.join(metastores)}. A running SparkSession cannot change its "
            "metastore (spark.hadoop.hive.metastore.uris and the Hive catalog are fixed when it starts): call "
            "spark.stop() first, then hivewire.spark.session(...) again"
        )
    return _builder(metastores, app_name, master, conf).getOrCreate()


# -- Events as DataFrames: to_dataframe(), SCHEMA ------------------------------------------------------
