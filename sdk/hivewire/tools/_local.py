"""Real Hive Metastore and ZooKeeper servers on this machine, started from the ``pyspark`` wheel's jars.

The ``pyspark`` wheel carries Hive 2.3's metastore and ZooKeeper 3.9, so a working Java 17+ and
``pip install 'hivewire[spark]'`` are all it takes to run both for a demo, a notebook or a test suite::

    with LocalMetastore() as hms:
        with hw.MetastoreClient(hms.uri) as client:
            print(client.get_all_databases())

Each server runs in its own Java process, on a free loopback port, with its state in a temporary
directory (removed on :meth:`stop` unless the caller gave the directory). :meth:`restart` keeps the port
and the state, so tests can take a service away and bring it back.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import random
import re
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, TypeVar
from xml.sax.saxutils import escape

from hivewire.errors import HivewireError, PrerequisiteError

MIN_JAVA = 17


#: Where :func:`free_port` picks from: below the kernel's ephemeral range (``ip_local_port_range``, from 32768 by
#: default), which every outgoing connection takes its local port from. A port the kernel hands out for
#: ``bind(0)`` is in that range, and between the check and the service's own bind an outgoing connection (a
#: Kafka client's, say) may take it: the service then fails with "Address already in use" (seen in the tests).
_PICK_FROM = 10000
_random = random.SystemRandom()  # not the global generator: a test seeding it would make processes pick alike


def _ephemeral_start() -> int:
    with contextlib.suppress(OSError, ValueError, IndexError):
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    return 32768


def free_port() -> int:
    """A TCP port nothing listens on right now (free on every interface), outside the range the kernel gives
    outgoing connections, so none of those takes it before the service that asked binds it."""
    end = _ephemeral_start()
    for _ in range(100 if end - _PICK_FROM >= 1000 else 0):
        port = _random.randrange(_PICK_FROM, end)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s, contextlib.suppress(OSError):
            s.bind(("0.0.0.0", port))  # all addresses: a listener on any of them holds the port
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:  # no room below the range: the kernel's pick
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def find_java() -> str:
    """Path of a ``java`` of version 17 or newer, from ``JAVA_HOME`` or ``PATH``.

    Raises :class:`PrerequisiteError` with install instructions when there is none.
    """
    java_home = os.environ.get("JAVA_HOME")
    candidate = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    hint = (
        f"hivewire runs a local Hive Metastore and ZooKeeper with Java {MIN_JAVA}+. "
        "Install one (Debian/Ubuntu: apt-get install openjdk-17-jre-headless) or set JAVA_HOME."
    )
    if not candidate or not os.access(candidate, os.X_OK):
        raise PrerequisiteError(f"no java found on PATH or in JAVA_HOME. {hint}")
    out = subprocess.run([candidate, "-version"], capture_output=True, text=True, timeout=30)
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        raise PrerequisiteError(f"could not read the version of {candidate}: {out.stderr.strip()!r}. {hint}")
    major = int(match.group(1))
    if major == 1 and match.group(2):  # "1.8.0" style
        major = int(match.group(2))
    if major < MIN_JAVA:
        raise PrerequisiteError(f"{candidate} is Java {major}. {hint}")
    return candidate


def compile_java(sources: Iterable[str | os.PathLike[str]], out: str | os.PathLike[str]) -> Path:
    """Compile Java ``sources`` against the pyspark wheel's jars into the directory ``out``; return it.

    For metastore plug-ins (a ``MetaStoreEventListener``) to load with :class:`LocalMetastore`'s ``classpath``.
    Needs a JDK (``javac`` beside ``java``); raises :class:`PrerequisiteError` without one and
    :class:`HivewireError` with the compiler's output when a source does not compile.
    """
    java = Path(find_java())
    javac = java.with_name("javac")
    if not os.access(javac, os.X_OK):
        raise PrerequisiteError(
            f"compiling Java needs a JDK, and {java.parent} has no javac: install one (Debian/Ubuntu: apt-get "
            "install openjdk-17-jdk-headless) or point JAVA_HOME at a JDK"
        )
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    files = [str(s) for s in sources]
    cmd = [str(javac), "-nowarn", "-d", str(target), "-cp", str(spark_jars_dir() / "*"), *files]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise HivewireError(f"javac failed on {', '.join(files)}:\n{done.stdout}{done.stderr}")
    return target


def spark_jars_dir() -> Path:
    """The ``jars`` directory of the installed ``pyspark`` wheel."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise PrerequisiteError(
            "pyspark is not installed; it carries the Hive Metastore and ZooKeeper jars. "
            "Install it with: pip install 'hivewire[spark]'"
        )
    jars = Path(next(iter(spec.submodule_search_locations))) / "jars"
    if not any(jars.glob("hive-metastore-*.jar")):
        raise PrerequisiteError(f"{jars} holds no hive-metastore jar; reinstall pyspark (pip install pyspark)")
    return jars


def _port_open(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
        return True
    return False


_S = TypeVar("_S", bound="LocalService")

# Everything to stderr, which start() sends to the service's log file; DataNucleus is too chatty at INFO.
_LOG4J2 = """status = WARN
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{ISO8601}} %-5p [%t] %c{{1}}: %m%n
rootLogger.level = {level}
rootLogger.appenderRef.console.ref = console
logger.datanucleus.name = DataNucleus
logger.datanucleus.level = WARN
logger.dn.name = org.datanucleus
logger.dn.level = WARN
"""


#: Extra options for the JVM of every service started here (the metastores, ZooKeeper, the Kafka broker; not
#: Spark's), before the service's own: e.g. ``-XX:TieredStopAtLevel=1`` (C1 alone: less CPU for JVMs that
#: live minutes, as the tests' do) or ``-Xss4m``.
JVM_OPTIONS_ENV = "HIVEWIRE_JVM_OPTIONS"


class LocalService:
    """A Java server process on a loopback port, with its log in a file."""

    name = "service"
    main_class = ""

    def __init__(
        self,
        *,
        port: int | None = None,
        workdir: str | os.PathLike[str] | None = None,
        start_timeout: float = 180.0,
        jvm_options: tuple[str, ...] = (),
    ) -> None:
        self.port = port or free_port()
        self._own_workdir = workdir is None
        self.workdir = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix=f"hivewire-{self.name}-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.workdir / f"{self.name}.log"
        self.start_timeout = start_timeout
        self.jvm_options = jvm_options
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    # -- subclass hooks -------------------------------------------------------------------------------
    log_level = "INFO"

    def _prepare(self) -> list[str]:
        """Write config files; return the classpath entries to put before the jars."""
        return []

    def _args(self) -> list[str]:
        return []

    def _ready(self) -> bool:
        return _port_open(self.port)

    def _jars(self) -> list[str]:
        """The classpath after :meth:`_prepare`'s entries: by default every jar of the pyspark wheel."""
        return [str(spark_jars_dir() / "*")]

    def _java(self) -> str:
        """The ``java`` to run the service with."""
        return find_java()

    # -- lifecycle ------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def start(self) -> None:
        """Start the process and wait until it answers; raise with the log's tail if it does not."""
        if self.running:
            return
        self.launch()
        self.wait_ready()

    def launch(self) -> None:
        """Start the process without waiting for it to answer (services that must start together, as the
        controllers of a Kafka quorum: :meth:`launch` each, then :meth:`wait_ready` each)."""
        if self.running:
            return
        java = self._java()
        classpath = os.pathsep.join([*self._prepare(), *self._jars()])
        log_config = self.workdir / "log4j2.properties"
        log_config.write_text(_LOG4J2.format(level=self.log_level))
        cmd = [
            java,
            "-Xmx1g",
            "-XX:+UseSerialGC",
            "-Djava.net.preferIPv4Stack=true",
            f"-Dlog4j2.configurationFile={log_config}",
            f"-Dlog4j.configurationFile={log_config}",
            *shlex.split(os.environ.get(JVM_OPTIONS_ENV, "")),
            *self.jvm_options,
            "-cp",
            classpath,
            self.main_class,
            *self._args(),
        ]
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        shown = [f"<{len(classpath.split(os.pathsep))} classpath entries>" if arg == classpath else arg for arg in cmd]
        self._log.write(f"\n=== hivewire: starting {' '.join(shown)}\n".encode())
        self._log.flush()
        self._proc = subprocess.Popen(
            cmd,
            cwd=self.workdir,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

    def wait_ready(self) -> None:
        """Wait until the launched process answers; stop it and raise with the log's tail if it does not."""
        if self._proc is None:
            raise HivewireError(f"{self.name} was not launched")
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise HivewireError(
                    f"{self.name} exited with code {self._proc.returncode} during start.\n"
                    f"Last lines of {self.log_path}:\n{self.log_tail()}"
                )
            if self._ready():
                return
            time.sleep(0.25)
        self.stop()
        raise HivewireError(
            f"{self.name} did not answer on port {self.port} within {self.start_timeout:.0f} s.\n"
            f"Last lines of {self.log_path}:\n{self.log_tail()}"
        )

    def stop(self, *, kill: bool = False) -> None:
        """Stop the process (SIGTERM, then SIGKILL after 20 s; ``kill=True`` sends SIGKILL at once)."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL if kill else signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=20)
        if self._log is not None:
            self._log.close()
            self._log = None

    def restart(self) -> None:
        """Stop and start again on the same port with the same state."""
        self.stop()
        deadline = time.monotonic() + 30
        while _port_open(self.port) and time.monotonic() < deadline:
            time.sleep(0.2)
        self.start()

    def close(self) -> None:
        """Stop the process and remove the working directory if hivewire created it."""
        self.stop()
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def __enter__(self: _S) -> _S:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class LocalMetastore(LocalService):
    """A Hive Metastore 2.3 Thrift server with an embedded Derby database.

    ``properties`` are added to its ``hive-site.xml``. ``classpath`` entries (directories or jars, such as
    :func:`compile_java`'s output) go before pyspark's jars, and ``listeners`` names
    ``MetaStoreEventListener`` classes the metastore loads (``hive.metastore.event.listeners``).
    :attr:`uri` is ``thrift://127.0.0.1:<port>``.
    """

    name = "metastore"
    main_class = "org.apache.hadoop.hive.metastore.HiveMetaStore"

    def __init__(
        self,
        *,
        port: int | None = None,
        workdir: str | os.PathLike[str] | None = None,
        properties: Mapping[str, str] | None = None,
        start_timeout: float = 180.0,
        jvm_options: tuple[str, ...] = (),
        classpath: Sequence[str | os.PathLike[str]] = (),
        listeners: Sequence[str] = (),
    ) -> None:
        super().__init__(port=port, workdir=workdir, start_timeout=start_timeout, jvm_options=jvm_options)
        self.properties = dict(properties or {})
        self.classpath = [str(entry) for entry in classpath]
        if listeners:
            given = [name for name in self.properties.get("hive.metastore.event.listeners", "").split(",") if name]
            self.properties["hive.metastore.event.listeners"] = ",".join([*given, *listeners])

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"

    @property
    def warehouse(self) -> Path:
        return self.workdir / "warehouse"

    def _prepare(self) -> list[str]:
        conf = self.workdir / "conf"
        conf.mkdir(exist_ok=True)
        props = {
            "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={self.workdir / 'metastore_db'};create=true",
            "datanucleus.schema.autoCreateAll": "true",
            "hive.metastore.schema.verification": "false",
            "hive.metastore.warehouse.dir": self.warehouse.as_uri(),
            # pyspark ships HikariCP, not BoneCP (Hive 2.3's default); without this drop_database breaks.
            "datanucleus.connectionPoolingType": "HikariCP",
            # Without this, log4j's async selector needs the LMAX disruptor, which pyspark does not ship.
            "hive.async.log.enabled": "false",
            **self.properties,
        }
        body = "".join(
            f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>\n" for k, v in props.items()
        )
        (conf / "hive-site.xml").write_text(f'<?xml version="1.0"?>\n<configuration>\n{body}</configuration>\n')
        # Hive's LogUtils looks for this name on the classpath and would otherwise log to /tmp/<user>/hive.log.
        (conf / "hive-log4j2.properties").write_text(_LOG4J2.format(level=self.log_level))
        return [str(conf), *self.classpath]

    def _args(self) -> list[str]:
        return ["-p", str(self.port)]

    def _ready(self) -> bool:
        # The port opens before the handler is usable; a real Thrift call proves it is serving.
        if not _port_open(self.port):
            return False
        from hivewire.metastore import MetastoreClient

        framed = self.properties.get("hive.metastore.thrift.framed.transport.enabled") == "true"
        compact = self.properties.get("hive.metastore.thrift.compact.protocol.enabled") == "true"
        try:
            with MetastoreClient(
                self.uri,
                timeout=30,
                transport="framed" if framed else "buffered",
                protocol="compact" if compact else "binary",
            ) as client:
                client.get_all_databases()
            return True
        except HivewireError:
            return False


class LocalZooKeeper(LocalService):
    """A standalone ZooKeeper 3.9 server. :attr:`quorum` is ``127.0.0.1:<port>``."""

    name = "zookeeper"
    main_class = "org.apache.zookeeper.server.ZooKeeperServerMain"

    @property
    def quorum(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _prepare(self) -> list[str]:
        data = self.workdir / "data"
        data.mkdir(exist_ok=True)
        (self.workdir / "zoo.cfg").write_text(
            "tickTime=2000\n"
            f"dataDir={data}\n"
            f"clientPort={self.port}\n"
            "clientPortAddress=127.0.0.1\n"
            "admin.enableServer=false\n"
            "4lw.commands.whitelist=ruok,srvr,stat\n"
            "maxSessionTimeout=60000\n"
        )
        return []

    def _args(self) -> list[str]:
        return [str(self.workdir / "zoo.cfg")]

    def _ready(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                s.sendall(b"ruok")
                return s.recv(4) == b"imok"
        except OSError:
            return False


class LocalSparkCluster:
    """A Spark standalone master and one worker, each started with the ``pyspark`` wheel's own ``spark-class``.

    ``url`` is the master (``spark://127.0.0.1:<port>``). The executors run ``python`` (default: this
    interpreter) with ``pythonpath`` on their path, so they import the hivewire of the caller.
    """

    def __init__(
        self,
        workdir: str | os.PathLike[str],
        *,
        cores: int = 2,
        memory: str = "2g",
        python: str | None = None,
        pythonpath: Sequence[str] = (),
        start_timeout: float = 300.0,
    ) -> None:
        import sys

        self.home = spark_jars_dir().parent
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.cores = cores
        self.memory = memory
        self.port = free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.start_timeout = start_timeout
        self.env = {
            **os.environ,
            "SPARK_HOME": str(self.home),
            "PYSPARK_PYTHON": python or sys.executable,
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PYTHONPATH": os.pathsep.join(pythonpath),
        }
        self._procs: list[subprocess.Popen[bytes]] = []

    def _start(self, name: str, *args: str) -> Path:
        log = self.workdir / f"{name}.log"
        with open(log, "ab") as out:
            self._procs.append(
                subprocess.Popen(
                    [str(self.home / "bin" / "spark-class"), *args],
                    cwd=self.workdir,
                    env=self.env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )
        return log

    def _wait(self, log: Path, line: str) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if line in log.read_text(errors="replace"):
                return
            if any(p.poll() is not None for p in self._procs):
                break
            time.sleep(0.5)
        self.stop()
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-60:])
        raise HivewireError(f"{log.name}: no {line!r} within {self.start_timeout:.0f} s. Last lines:\n{tail}")

    def start(self) -> None:
        """Start the master, then the worker; return once the worker has registered with the master."""
        master = self._start(
            "master",
            "org.apache.spark.deploy.master.Master",
            *("--host", "127.0.0.1", "--port", str(self.port), "--webui-port", str(free_port())),
        )
        self._wait(master, "I have been elected leader")
        worker = self._start(
            "worker",
            "org.apache.spark.deploy.worker.Worker",
            self.url,
            *("--host", "127.0.0.1", "--cores", str(self.cores), "--memory", self.memory),
            *("--webui-port", str(free_port()), "--work-dir", str(self.workdir / "work")),
        )
        self._wait(worker, "Successfully registered with master")

    def stop(self) -> None:
        """Stop the worker and the master (SIGTERM, then SIGKILL after 30 s)."""
        procs, self._procs = self._procs, []
        for proc in reversed(procs):
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=30)

    def __enter__(self) -> LocalSparkCluster:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
