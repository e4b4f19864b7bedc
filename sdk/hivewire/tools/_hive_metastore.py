"""Standalone Hive Metastores 3.1 and 4.x, their released jars from Maven Central, on an embedded Derby.

:class:`LocalMetastore` runs Hive 2.3 from the pyspark wheel's jars; :class:`HiveMetastore` runs the Hive
releases the wheel does not carry, each a component of ``jvm/pom.xml`` (``hive3-metastore``,
``hive4-metastore``) resolved by :mod:`hivewire.tools._jvm`::

    with HiveMetastore("4") as hms:
        with hw.MetastoreClient(hms.uri) as client:
            print(client.get_catalogs())

It lives here, beside :class:`LocalMetastore`, rather than in the tests, because it is the same kind of
thing (a local server that ``hivewire local``, the benchmarks and the tests can all start) and shares its
configuration and readiness check.

Invariants:

* The release and its Hadoop are the pom's pins (``hive3.version``, ``hive4.version``); nothing here names
  a version, so :attr:`HiveMetastore.version` is read from the pom.
* The schema is DataNucleus's ``autoCreateAll`` (the schema scripts ``schematool`` runs ship in Hive's
  binary tarball, not in any jar on Maven Central: the 3.1.3 and 4.0.1 jars hold the tool's classes and no
  ``.sql``), with schema verification off. The transaction tables, made only by those scripts, are absent:
  the tests use no ACID call.
* Both releases run on the default Java 17 (4.0.1 with the ``--add-opens`` Hadoop needs there), in a
  process of their own; a release that needs another JDK would override :meth:`HiveMetastore._java`.
* A start that fails is reported at once with the log's tail (Hive's metastore logs the failure and keeps
  its JVM alive), never by waiting out the start timeout.
* The server's configuration is written both as ``hive-site.xml`` and ``metastore-site.xml`` (Hive 3+
  reads either), with Hive's ``hive.*`` spellings where 3.1 and 4.x spell the ``metastore.*`` ones apart.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from hivewire.errors import HivewireError, PrerequisiteError
from hivewire.tools import _jvm
from hivewire.tools._local import LocalMetastore, find_java

#: The releases this module runs: a short name -> the pom's component.
COMPONENTS = {"3": "hive3-metastore", "4": "hive4-metastore"}

#: Options the JVM needs for Hadoop and DataNucleus on Java 17+ (reflective access to java.base).
_OPENS = tuple(
    f"--add-opens=java.base/{package}=ALL-UNNAMED"
    for package in ("java.lang", "java.lang.reflect", "java.util", "java.util.concurrent", "java.net", "java.nio",
                    "java.io", "sun.nio.ch", "java.util.regex", "java.text", "java.security")
)  # fmt: skip


#: The line Hive's metastore logs when its start fails (HiveMetaStore.main).
_FAILED_START = "Metastore Thrift Server threw an exception"

#: What every one of these metastores is configured with, before the caller's ``properties``.
_SITE = {
    # The standalone releases' own metastore-site.xml sets this: the default names a class of Hive's query
    # compiler (hive-exec), which a standalone metastore does not have.
    "metastore.expression.proxy": "org.apache.hadoop.hive.metastore.DefaultPartitionExpressionProxy",
    # No Hive 4 housekeeping threads (compaction, statistics): they only add load to a test machine.
    "metastore.compactor.initiator.on": "false",
    "metastore.compactor.cleaner.on": "false",
    "metastore.housekeeping.threads.on": "false",
    # The default list names tasks of hive-exec (DumpDirCleanerTask) that a standalone metastore lacks.
    "metastore.task.threads.always": "org.apache.hadoop.hive.metastore.events.EventCleanerTask",
    # Let any user read the notification log (Hive's hive.* name: 3.1 spells the metastore.* one
    # metastore.metastore.event.db.notification.api.auth).
    "hive.metastore.event.db.notification.api.auth": "false",
}


class HiveMetastore(LocalMetastore):
    """A standalone Hive Metastore 3.1 (``release="3"``) or 4.x (``release="4"``) Thrift server on Derby.

    The other arguments are :class:`LocalMetastore`'s: ``properties`` go into its configuration,
    ``classpath`` entries go before the release's jars, ``listeners`` are loaded as
    ``hive.metastore.event.listeners``. :attr:`uri` is ``thrift://127.0.0.1:<port>``.
    """

    name = "metastore"
    main_class = "org.apache.hadoop.hive.metastore.HiveMetaStore"

    def __init__(
        self,
        release: str,
        *,
        port: int | None = None,
        workdir: str | os.PathLike[str] | None = None,
        properties: Mapping[str, str] | None = None,
        start_timeout: float = 300.0,
        jvm_options: tuple[str, ...] = (),
        classpath: Sequence[str | os.PathLike[str]] = (),
        listeners: Sequence[str] = (),
    ) -> None:
        if release not in COMPONENTS:
            raise HivewireError(f"no Hive release {release!r} to run: choose one of {', '.join(COMPONENTS)}")
        self.release = release
        self.component = COMPONENTS[release]
        self.name = f"metastore-{release}"
        super().__init__(
            port=port,
            workdir=workdir,
            properties={**_SITE, **(properties or {})},
            start_timeout=start_timeout,
            jvm_options=(*_OPENS, *jvm_options),
            classpath=classpath,
            listeners=listeners,
        )
        # Hive 4 keeps external tables (and the databases' external paths) here, and refuses an external table
        # inside the managed warehouse: a directory of its own in the work dir.
        self.properties.setdefault("metastore.warehouse.external.dir", self.external_warehouse.as_uri())

    @property
    def version(self) -> str:
        """The Hive release, as pinned in the pom (``3.1.3``, ``4.0.1``)."""
        return _jvm.version(f"hive{self.release}")

    @property
    def external_warehouse(self) -> Path:
        """Where external tables go (Hive 4's ``metastore.warehouse.external.dir``); not under :attr:`warehouse`."""
        return self.workdir / "external"

    def _ready(self) -> bool:
        # A failed start leaves the JVM running (its other threads are not daemons): fail at once instead.
        if _FAILED_START in self.log_tail(200):
            self.stop()
            raise HivewireError(
                f"Hive {self.version}'s metastore failed to start.\nLast lines of {self.log_path}:\n{self.log_tail()}"
            )
        return super()._ready()

    def _jars(self) -> list[str]:
        return [str(jar) for jar in _jvm.resolve(self.component)]

    def _java(self) -> str:
        return find_java()

    def _prepare(self) -> list[str]:
        entries = super()._prepare()
        conf = self.workdir / "conf"
        shutil.copyfile(conf / "hive-site.xml", conf / "metastore-site.xml")
        return entries


def hive_jars(release: str) -> list[Path]:
    """The jars of a release (resolving them the first time), for compiling Java against that release."""
    if release not in COMPONENTS:
        raise PrerequisiteError(f"no Hive release {release!r}: choose one of {', '.join(COMPONENTS)}")
    return _jvm.resolve(COMPONENTS[release])


def hive_common_jars(release: str) -> list[Path]:
    """Hive's ``hive-common`` of a release: what plug-ins built for a whole Hive (Apiary's listener reads
    ``HiveVersionInfo``) need beside a standalone metastore, which does not carry it."""
    hive_jars(release)  # the same check of the release
    return _jvm.resolve(f"hive{release}-common")


def compile_java_for(release: str, sources: Iterable[str | os.PathLike[str]], out: str | os.PathLike[str]) -> Path:
    """Compile Java ``sources`` against a release's jars into ``out`` (a metastore plug-in for that release)."""
    javac = Path(find_java()).with_name("javac")
    if not os.access(javac, os.X_OK):
        raise PrerequisiteError(f"compiling Java needs a JDK, and {javac.parent} has no javac: install one")
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    files = [str(s) for s in sources]
    classpath = os.pathsep.join(str(jar) for jar in hive_jars(release))
    done = subprocess.run(
        [str(javac), "-nowarn", "-d", str(target), "-cp", classpath, *files],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        raise HivewireError(f"javac failed on {', '.join(files)} against Hive {release}:\n{done.stdout}{done.stderr}")
    return target
