"""Spark helpers: SparkSessions pointed at live metastores, and metastore events as DataFrames.

``pyspark`` is imported inside the functions, so this module imports without it; a missing pyspark raises
:class:`~hivewire.errors.PrerequisiteError` naming the extra to install (``hivewire[spark]``).
"""

from __future__ import annotations

import logging
import os
import random
from typing import TYPE_CHECKING, Any

from hivewire.data._spark_schema import _events_schema

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType
    from typing_extensions import Unpack

    from hivewire.data._arrow import Undecodable
    from hivewire.events._model import ListenerEvent
    from hivewire.metastore._zookeeper import DiscoveryConfig, DiscoveryOptions

log = logging.getLogger("hivewire.spark")

# -- Sessions on discovered metastores: builder(), session() ------------------------------------------

METASTORE_URIS_CONF = "spark.hadoop.hive.metastore.uris"
"""The Spark setting that hands ``hive.metastore.uris`` to Spark's built-in Hive client."""

HIVE_CLIENT_VERSION_CONF = "spark.sql.hive.metastore.version"
"""The release of the Hive client Spark talks to the metastore with (its built-in one is 2.3's)."""

HIVE_CLIENT_JARS_CONF = "spark.sql.hive.metastore.jars"
"""Where that client's jars come from: ``builtin``, ``maven`` (Spark downloads them) or ``path``."""


def _spark_session_class() -> Any:
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:
        from hivewire.errors import PrerequisiteError

        raise PrerequisiteError(
            "hivewire.spark needs pyspark, which is not installed: pip install 'hivewire[spark]'"
        ) from e
    return SparkSession


def _resolve_metastores(
    zookeeper: str | DiscoveryConfig | None,
    namespace: str | None,
    uris: str | list[str] | None,
    hive_site: str | os.PathLike[str] | None,
    zk_options: DiscoveryOptions,
) -> tuple[list[str], bool]:
    """(metastore URIs, discovered?) from exactly one of the three sources."""
    from hivewire.errors import ConfigError
    from hivewire.metastore import _discovery as discovery
    from hivewire.metastore import _zookeeper as zk_settings
    from hivewire.metastore import parse_uris

    given = [
        name
        for name, value in (("zookeeper", zookeeper), ("uris", uris), ("hive_site", hive_site))
        if value is not None
    ]
    if len(given) != 1:
        raise ConfigError(
            "metastore",
            "give exactly one of zookeeper='zk1:2181,...', uris='thrift://h:9083' or "
            f"hive_site='/path/hive-site.xml' (got {', '.join(given) or 'none'})",
        )
    extra = sorted(zk_options) + (["namespace"] if namespace is not None else [])
    if uris is not None:
        if extra:
            raise ConfigError(
                extra[0],
                "ZooKeeper options apply only with zookeeper= or hive_site= (in discovery "
                "mode), not with explicit uris=",
            )
        return parse_uris(uris), False
    if zookeeper is not None:
        found = discovery.discover_metastores(zk_settings.discovery_config(zookeeper, namespace, **zk_options))
    else:
        assert hive_site is not None
        conf = discovery.load_conf(hive_site)
        if discovery.discovery_mode(conf) != "zookeeper":
            if extra:
                raise ConfigError(
                    extra[0],
                    f"{os.fspath(hive_site)} does not turn on ZooKeeper discovery "
                    "(metastore.service.discovery.mode=zookeeper), so ZooKeeper options do "
                    "not apply: remove them, or set that key",
                )
            static = discovery.metastore_uris_from_conf(conf)
            assert isinstance(static, list)
            return static, False
        # The site's own settings, with the arguments (credentials it cannot hold, a namespace) on top.
        config = zk_settings.discovery_config(zk_settings.DiscoveryConfig.from_conf(conf), namespace, **zk_options)
        found = discovery.discover_metastores(config)
    # Hive's default RANDOM selection: spread sessions over the live metastores.
    random.shuffle(found)
    return found, True


def _builder(
    metastores: list[str],
    app_name: str,
    master: str | None,
    conf: dict[str, str] | None,
    metastore_version: str | None,
) -> SparkSession.Builder:
    spark_session = _spark_session_class()
    # A fresh Builder: on older pyspark ``SparkSession.builder`` is one shared object that keeps options.
    b = spark_session.Builder().appName(app_name)
    if master is not None:
        b = b.master(master)
    if metastore_version is not None:
        b = b.config(HIVE_CLIENT_VERSION_CONF, metastore_version).config(HIVE_CLIENT_JARS_CONF, "maven")
    for key, value in (conf or {}).items():
        b = b.config(key, value)
    return b.config(METASTORE_URIS_CONF, ",".join(metastores)).enableHiveSupport()


def _metastore_release(metastores: list[str]) -> tuple[str, str] | None:
    """(URI, release) of the first of ``metastores`` that answers fb303 ``getVersion``; None if none does
    (unreachable, or secured in a way a plain connection cannot pass: then Spark finds out for itself)."""
    from hivewire.errors import HivewireError
    from hivewire.metastore import MetastoreClient

    try:
        with MetastoreClient(metastores, timeout=5.0, connect_timeout=5.0) as client:
            return client.uri or metastores[0], str(client.call("getVersion") or "")
    except HivewireError as e:
        log.debug("could not ask the metastore for its release (%s); Spark's Hive client is not checked", e)
        return None


_BUILT_IN_CLIENT = "2.3 (built-in)"


def _hive_client(spark: SparkSession) -> str:
    """The release of ``spark``'s Hive client: unset until Spark's Hive module first loads (asking for it by
    name would fail), then the built-in one."""
    return str(spark.conf.get(HIVE_CLIENT_VERSION_CONF, None) or _BUILT_IN_CLIENT)


def _check_hive_client(spark: SparkSession, metastores: list[str], *, started_here: bool) -> None:
    """Refuse a Hive client older than 4.0 on a Hive 4 metastore: it creates databases there, then fails on
    every table with "Invalid method name: 'get_table'". A session ``started_here`` is stopped; a session
    that was already running is the caller's, and is left running."""
    from hivewire.errors import ConfigError
    from hivewire.metastore._release import is_hive4, major

    client = _hive_client(spark)
    if major(client) is None or is_hive4(client):
        return
    found = _metastore_release(metastores)
    if found is None or not is_hive4(found[1]):
        return
    uri, release = found
    if started_here:
        spark.stop()
        how = "Give Spark a Hive 4.0 client: "
    else:
        how = "The running SparkSession cannot change its client: spark.stop() it, then give Spark a Hive 4.0 one: "
    raise ConfigError(
        HIVE_CLIENT_VERSION_CONF,
        f"the metastore at {uri} is Hive {release}, which no longer answers get_table, the call Spark's Hive "
        f"{client} client reads every table with. {how}"
        "hivewire.spark.session(..., metastore_version='4.0.1') (Spark downloads its jars from Maven Central on "
        f"first use), or set {HIVE_CLIENT_VERSION_CONF}=4.0.1 with {HIVE_CLIENT_JARS_CONF}=path and "
        f"{HIVE_CLIENT_JARS_CONF}.path naming Hive 4.0.1's client jars in the session's conf",
    )


def _check_running_client(spark: SparkSession, metastores: list[str], metastore_version: str | None) -> None:
    """A running session is reused only with the Hive client asked for, and one that reads the metastore."""
    from hivewire.errors import HivewireError

    client = _hive_client(spark)
    built_in = client == _BUILT_IN_CLIENT and (metastore_version or "").startswith("2.3")  # 2.3.10 in Spark 4
    if metastore_version is not None and client != metastore_version and not built_in:
        raise HivewireError(
            f"a SparkSession is already running with Hive client {client}, not metastore_version="
            f"{metastore_version!r}. A running SparkSession cannot change its Hive client ({HIVE_CLIENT_VERSION_CONF} "
            "is fixed when it starts): call spark.stop() first, then hivewire.spark.session(...) again"
        )
    _check_hive_client(spark, metastores, started_here=False)


def builder(
    *,
    zookeeper: str | DiscoveryConfig | None = None,
    namespace: str | None = None,
    uris: str | list[str] | None = None,
    hive_site: str | os.PathLike[str] | None = None,
    app_name: str = "hivewire",
    master: str | None = None,
    conf: dict[str, str] | None = None,
    metastore_version: str | None = None,
    **zk_options: Unpack[DiscoveryOptions],
) -> SparkSession.Builder:
    """A ``SparkSession.Builder`` with Hive support, pointed at the metastores.

    Give one of: ``zookeeper`` (the live metastores under ``/<namespace>``, shuffled), ``uris`` (explicit
    ``thrift://`` URIs) or ``hive_site`` (a ``hive-site.xml``, with or without ZooKeeper discovery).
    ``zookeeper`` is a quorum or a :class:`~hivewire.metastore.DiscoveryConfig`; ``namespace`` (default
    ``hive_metastore``, or the config's or site's own) and ``zk_options`` (other ``DiscoveryConfig`` fields:
    ``auth_data``, ``use_ssl``, ``certfile``, ``keyfile``, ``ca``, ``session_timeout``, ...) work as in
    :func:`hivewire.metastore.discover_metastores`, and override a ``hive_site``'s settings. ``conf`` holds
    more Spark settings. ``metastore_version`` (``"4.0.1"`` for a Hive 4 metastore) is the release of the Hive
    client Spark talks to the metastores with, its jars downloaded by Spark from Maven Central on first use
    (``conf`` may name them instead: ``spark.sql.hive.metastore.jars``); None keeps Spark's built-in Hive 2.3
    client. The URIs are resolved now: call ``.getOrCreate()`` soon, or use :func:`session`, which also
    refuses a client that cannot read the metastore's tables.
    """
    metastores, _ = _resolve_metastores(zookeeper, namespace, uris, hive_site, zk_options)
    return _builder(metastores, app_name, master, conf, metastore_version)


def _running_session(spark_session: type[SparkSession]) -> SparkSession | None:
    """The session ``getOrCreate()`` would return: this thread's active one, else the default one."""
    active = spark_session.getActiveSession()
    if active is not None:
        return active
    default = getattr(spark_session, "_instantiatedSession", None)
    if default is not None and getattr(default.sparkContext, "_jsc", None) is not None:
        return default
    return None


def _session_metastores(spark: SparkSession) -> tuple[str, list[str]]:
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


def session(
    *,
    zookeeper: str | DiscoveryConfig | None = None,
    namespace: str | None = None,
    uris: str | list[str] | None = None,
    hive_site: str | os.PathLike[str] | None = None,
    app_name: str = "hivewire",
    master: str | None = None,
    conf: dict[str, str] | None = None,
    metastore_version: str | None = None,
    **zk_options: Unpack[DiscoveryOptions],
) -> SparkSession:
    """``builder(...).getOrCreate()``, safe in notebooks (the same arguments as :func:`builder`).

    A session that is already running is returned when it uses the Hive catalog and the same metastores
    (explicit URIs: the same set; discovered: at least one of the live ones), and ``conf`` is not applied to
    it. A running session pointed elsewhere, or (``metastore_version`` given) with another Hive client, raises
    :class:`~hivewire.errors.HivewireError`: both are fixed when it starts, and Spark would otherwise hand it
    back silently. A session whose Hive client is older than 4.0 on a Hive 4 metastore (asked with fb303
    ``getVersion``) raises :class:`~hivewire.errors.ConfigError` naming ``metastore_version``: that client
    would create databases there and then fail on every table. A new session is stopped first; a running one
    is yours, and is left running.
    """
    from hivewire.errors import HivewireError

    spark_session = _spark_session_class()
    metastores, discovered = _resolve_metastores(zookeeper, namespace, uris, hive_site, zk_options)
    running = _running_session(spark_session)
    if running is not None:
        catalog, current = _session_metastores(running)
        same = set(current) & set(metastores) if discovered else set(current) == set(metastores)
        if catalog == "hive" and same:
            _check_running_client(running, current, metastore_version)
            log.info("reusing the running SparkSession (metastores %s)", ", ".join(current))
            return _registered(running)
        raise HivewireError(
            f"a SparkSession is already running with catalog {catalog!r} and metastores "
            f"{', '.join(current) or 'none'}, not {', '.join(metastores)}. A running SparkSession cannot change its "
            "metastore (spark.hadoop.hive.metastore.uris and the Hive catalog are fixed when it starts): call "
            "spark.stop() first, then hivewire.spark.session(...) again"
        )
    spark = _builder(metastores, app_name, master, conf, metastore_version).getOrCreate()
    _check_hive_client(spark, metastores, started_here=True)
    return _registered(spark)


def _registered(spark: SparkSession) -> SparkSession:
    """``spark`` with the data source registered when this pyspark has the API (a session works without it)."""
    from hivewire.errors import PrerequisiteError

    try:
        return register(spark)
    except PrerequisiteError as e:
        log.info("the hivewire data source is not registered: %s", e)
        return spark


def register(spark: SparkSession) -> SparkSession:
    """Register the ``hivewire`` and ``hivewire_raw`` data sources with ``spark`` (and return it); :func:`session`
    and :func:`read` do this themselves.

    Then ``spark.read.format("hivewire")`` and ``spark.readStream.format("hivewire")`` read an Apiary topic
    (``docs/data.md``). The executors import hivewire to read, so it must be installed where they run (or
    shipped with ``spark.sparkContext.addPyFile``). Needs pyspark 4.2 or later.
    """
    from hivewire.errors import PrerequisiteError

    _spark_session_class()
    try:
        from hivewire.data._spark_source import HivewireDataSource, HivewireRawDataSource
    except ImportError as e:
        raise PrerequisiteError(
            f"the hivewire Spark data source needs pyspark 4.2 or later and pyarrow ({e}): "
            "pip install 'hivewire[spark]'"
        ) from e
    spark.dataSource.register(HivewireDataSource)
    spark.dataSource.register(HivewireRawDataSource)
    return spark


def _raw_reader(reader: Any, bootstrap_servers: str, topic: str, options: Mapping[str, str] | None) -> Any:
    reader = reader.format("hivewire_raw").option("kafka.bootstrap.servers", bootstrap_servers).option("topic", topic)
    for key, value in (options or {}).items():
        reader = reader.option(key, value)
    return reader.load()


def read(
    spark: SparkSession, *, bootstrap_servers: str, topic: str, options: Mapping[str, str] | None = None
) -> DataFrame:
    """The events of an Apiary topic as a DataFrame of :data:`SPARK_SCHEMA`, decoded in the JVM.

    The same rows as ``spark.read.format("hivewire")`` with the same ``options`` (``docs/data.md``), faster:
    the executors only read the records (the ``hivewire_raw`` source) and Spark decodes them (``from_json`` and
    one SQL expression per column: :func:`from_kafka`). Registers the sources with ``spark`` if needed.
    """
    return from_kafka(_raw_reader(register(spark).read, bootstrap_servers, topic, options))


def read_stream(
    spark: SparkSession, *, bootstrap_servers: str, topic: str, options: Mapping[str, str] | None = None
) -> DataFrame:
    """:func:`read` as a stream: ``spark.readStream.format("hivewire")``'s rows, offsets and options."""
    return from_kafka(_raw_reader(register(spark).readStream, bootstrap_servers, topic, options))


def from_kafka(frame: DataFrame) -> DataFrame:
    """Kafka records (Spark's own Kafka source, or ``hivewire_raw``) as events of :data:`SPARK_SCHEMA`.

    ``from_json`` of each ``value`` and one Spark SQL expression per column, all in the JVM; a message that does
    not decode is a row with ``decode_error``, ``raw`` and the Kafka columns, as in ``hivewire.arrow.to_arrow``.
    The checks it cannot make as the Python decoder does are listed in ``docs/data.md``.
    """
    from hivewire.data._spark_sql import from_kafka as project

    return project(frame)


# -- Events as DataFrames: to_dataframe(), SCHEMA ------------------------------------------------------
#
# Events become a Spark DataFrame through Arrow: hivewire.arrow builds the columns, and Spark receives
# them as Arrow record batches (pyspark 4's createDataFrame(pyarrow.Table)). No Python Row is ever built,
# which is what makes this faster than createDataFrame(rows) (bench/bench_arrow.py measures both).


def __getattr__(name: str) -> StructType:
    # SPARK_SCHEMA is a module attribute computed on first access, so importing hivewire.spark stays free of
    # pyspark and pyarrow.
    if name == "SPARK_SCHEMA":
        return _events_schema()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def to_dataframe(
    spark: SparkSession, events: Iterable[ListenerEvent | Undecodable] | pa.Table, *, raw: bool = True
) -> DataFrame:
    """A Spark DataFrame of ``events`` with :data:`SPARK_SCHEMA` (hivewire.arrow's schema in Spark types).

    ``events`` is an iterable of events (and :class:`hivewire.arrow.Undecodable` messages), or a
    ``pyarrow.Table`` that :func:`hivewire.arrow.to_arrow` returned. The rows travel to the JVM as Arrow
    record batches, never as Python ``Row`` objects. ``raw=False`` leaves the ``raw`` column null, which
    keeps the message bytes out of the JVM (they are usually most of the data). Needs pyspark 4 or later.
    """
    import importlib

    from hivewire.data._arrow import to_arrow
    from hivewire.errors import PrerequisiteError

    pa = importlib.import_module("pyarrow")

    _spark_session_class()
    if not _accepts_arrow():
        raise PrerequisiteError(
            "hivewire.spark.to_dataframe needs pyspark 4 or later (createDataFrame from a "
            "pyarrow.Table): pip install 'pyspark>=4'"
        )
    table = events if isinstance(events, pa.Table) else to_arrow(events)
    if table.num_rows == 0:  # Spark cannot infer types from an empty Arrow table: the schema says them
        return spark.createDataFrame([], schema=_events_schema())
    if not raw:
        column = table.schema.get_field_index("raw")
        table = table.set_column(column, table.schema.field(column), pa.nulls(table.num_rows, pa.binary()))
    return spark.createDataFrame(table, schema=_events_schema())


def _accepts_arrow() -> bool:
    """Whether this pyspark's createDataFrame takes a pyarrow.Table (added in pyspark 4.0)."""
    import pyspark

    return int(str(pyspark.__version__).split(".")[0]) >= 4
