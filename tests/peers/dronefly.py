"""Drone Fly, the real one, as a test peer: start a release from a properties file, read what it delivered.

:class:`DroneFly` runs ``com.expediagroup.dataplatform.dronefly.app.DroneFly`` of release ``"1.0.9"`` (Hive
4.0.1, Spring Boot 3.4; needs Java 21+, so Temurin 25: :func:`java_for`) or ``"1.0.8"`` (Hive 2.3.9, Java 17) on
the flat classpath the pom resolves (profiles ``dronefly`` and ``dronefly-legacy``), reading the same properties
file ``hivewire run --config`` reads (Drone Fly's keys: ``apiary.bootstrap.servers``, ``apiary.kafka.topic.name``,
``instance.name``, ``apiary.listener.list``, ``apiary.messaging.consumer.*``, ``endpoint.port``) through
Spring's ``spring.config.import``. ``overrides`` are Spring command-line arguments, which win over the file: the
harness always gives ``endpoint.port`` a free port (:attr:`port`) and, unless told otherwise,
``apiary.listener.list`` the tests' recorder.

The recorder is the Java class ``CallbackRecorder``
(tests/peers/java/hivewire/peers/CallbackRecorder.java), one source compiled by
:func:`compile_recorder` against each release's own classpath with that release's JDK; it appends one JSON line
per callback to :attr:`DroneFly.recording` (:meth:`DroneFly.records`), and waits ``sleep_ms`` per callback
when asked (the benchmark's waiting listener).

Invariants: a ``log4j.properties`` is first on the classpath (SLF4J binds to reload4j there, and without it
Drone Fly's own lines vanish); :meth:`DroneFly.start` returns only once the log says ``Started DroneFly`` and
raises with the log's tail if the process exits or does not get there; :meth:`DroneFly.errors` is every line of
the log that reports an error (``ERROR``, ``Cannot unmarshal``, a Java exception or a stack frame).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from confluent_kafka import Consumer, TopicPartition
from waiting import wait_for

from hivewire.errors import HivewireError, PrerequisiteError
from hivewire.tools import _jvm
from hivewire.tools._local import LocalService, find_java, free_port

HERE = Path(__file__).resolve().parent
RECORDER_APP = "callback_recorder:app"
RECORDING_ENV = "HIVEWIRE_PEERS_RECORDING"

MAIN_CLASS = "com.expediagroup.dataplatform.dronefly.app.DroneFly"
RECORDER = "hivewire.peers.CallbackRecorder"
RECORDER_SOURCE = HERE / "java" / "hivewire" / "peers" / "CallbackRecorder.java"

#: The pom component of each release, and the Java it needs (major version at least).
RELEASES: dict[str, tuple[str, int]] = {"1.0.9": ("dronefly", 21), "1.0.8": ("dronefly-legacy", 17)}

#: Where a Java 21+ is looked for when the default one is older: ``$HIVEWIRE_DRONEFLY_JAVA`` (a java binary),
#: else these JDKs (the machines ship Temurin 25 beside OpenJDK 17).
JAVA_ENV = "HIVEWIRE_DRONEFLY_JAVA"
JDK_DIRS = (
    "/usr/lib/jvm/temurin-25-jdk-amd64",
    "/usr/lib/jvm/temurin-21-jdk-amd64",
    "/usr/lib/jvm/java-21-openjdk-amd64",
)

#: A log4j 1.x configuration (reload4j reads it from the classpath): everything at INFO to stdout, the log file.
LOG4J_PROPERTIES = """log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.Target=System.out
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c: %m%n
log4j.logger.org.apache.kafka=WARN
log4j.logger.org.apache.kafka.clients.consumer.internals.ConsumerCoordinator=INFO
log4j.logger.org.apache.hadoop=WARN
log4j.logger.DataNucleus=WARN
log4j.logger.org.datanucleus=WARN
"""

#: A log line that reports an error: log4j's level, Drone Fly's SerDe failure, a Java exception or stack frame.
ERROR_LINE = re.compile(r"\bERROR\b|Cannot unmarshal|\b[\w.$]+(Exception|Error)\b[:\s]|^\s+at [\w.$]+\(", re.M)


#: The start of a log line of either release (1.0.9's log4j pattern above; 1.0.8's Spring Boot default).
LOG_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[.,]\d{3} ")


def _java_major(java: str) -> int:
    out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    match = re.search(r'version "(\d+)', out.stderr + out.stdout)
    return int(match.group(1)) if match else 0


def java_for(release: str) -> str:
    """The ``java`` binary that runs Drone Fly ``release``: the default one if new enough, else a Java 21+."""
    _, minimum = _release(release)
    default = find_java()
    if _java_major(default) >= minimum:
        return default
    candidates = [os.environ.get(JAVA_ENV, ""), *(str(Path(d) / "bin" / "java") for d in JDK_DIRS)]
    for java in candidates:
        if java and os.access(java, os.X_OK) and _java_major(java) >= minimum:
            return java
    raise PrerequisiteError(
        f"Drone Fly {release} needs Java {minimum}+ and {default} is older: install one (Temurin 25 at "
        f"{JDK_DIRS[0]}) or set {JAVA_ENV} to its java binary"
    )


def _release(release: str) -> tuple[str, int]:
    if release not in RELEASES:
        raise HivewireError(f"no Drone Fly release {release!r}: the tests know {', '.join(RELEASES)}")
    return RELEASES[release]


def classpath(release: str) -> list[Path]:
    """Drone Fly ``release``'s jars, as its own executable jar carries them (resolved by the pom's profile)."""
    return _jvm.resolve(_release(release)[0])


def compile_recorder(release: str, out: Path, sources: Sequence[Path] = (RECORDER_SOURCE,)) -> Path:
    """Compile ``sources`` (the recorder by default) against Drone Fly ``release``'s classpath into ``out``."""
    javac = Path(java_for(release)).with_name("javac")
    if not os.access(javac, os.X_OK):
        raise PrerequisiteError(f"compiling Java needs a JDK, and {javac.parent} has no javac: install one")
    out.mkdir(parents=True, exist_ok=True)
    cp = os.pathsep.join(str(jar) for jar in classpath(release))
    done = subprocess.run(
        [str(javac), "-nowarn", "-d", str(out), "-cp", cp, *map(str, sources)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        raise HivewireError(f"javac failed against Drone Fly {release}:\n{done.stdout}{done.stderr}")
    return out


def read_properties(path: Path) -> dict[str, str]:
    """The ``key=value`` lines of a properties file (comments and blank lines left out)."""
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", "!")) and "=" in stripped:
            key, value = stripped.split("=", 1)
            out[key.strip()] = value.strip()
    return out


def write_properties(path: Path, settings: Mapping[str, str]) -> Path:
    """Write ``settings`` as a properties file both Drone Fly and ``hivewire run --config`` read; return it."""
    path.write_text("".join(f"{key}={value}\n" for key, value in settings.items()), encoding="utf-8")
    return path


class DroneFly(LocalService):
    """One Drone Fly of ``release`` started from ``properties`` (a file), with the recorder on its classpath.

    ``classes`` are compiled listener classes (:func:`compile_recorder`'s output; compiled into the workdir
    when not given); ``overrides`` win over the file (``instance.name`` for a second consumer group on the same
    file, ``apiary.listener.list`` for another listener); ``sleep_ms`` makes the recorder wait per callback.
    """

    name = "dronefly"
    main_class = MAIN_CLASS

    def __init__(
        self,
        release: str,
        properties: Path,
        *,
        workdir: Path,
        classes: Path | None = None,
        overrides: Mapping[str, str] | None = None,
        sleep_ms: int = 0,
        record: bool = True,
        start_timeout: float = 240.0,
    ) -> None:
        _release(release)
        self.release = release
        self.properties = Path(properties).resolve()
        if not self.properties.is_file():
            raise HivewireError(f"no properties file {self.properties}: Drone Fly starts from one")
        self.recording = Path(workdir) / "callbacks.jsonl"
        options = [f"-Dhivewire.peers.sleep.ms={sleep_ms}", "-Xmx1g"]
        if record:
            options.append(f"-Dhivewire.peers.recording={self.recording}")
        super().__init__(workdir=workdir, start_timeout=start_timeout, jvm_options=tuple(options))
        self.name = f"dronefly-{release}"
        self.log_path = self.workdir / f"{self.name}.log"
        self.classes = classes
        self._stopped_at: int | None = None
        self.overrides = {"apiary.listener.list": RECORDER, **(overrides or {}), "endpoint.port": str(self.port)}

    @property
    def instance_name(self) -> str:
        """The ``instance.name`` it runs with (its consumer group is ``apiary-kafka-metastore-receiver-<it>``)."""
        return self.overrides.get("instance.name") or read_properties(self.properties).get("instance.name", "drone-fly")

    def _java(self) -> str:
        return java_for(self.release)

    def _prepare(self) -> list[str]:
        if self.classes is None:
            self.classes = compile_recorder(self.release, self.workdir / "classes")
        resources = self.workdir / "resources"
        resources.mkdir(exist_ok=True)
        (resources / "log4j.properties").write_text(LOG4J_PROPERTIES)
        self.recording.touch()
        return [str(resources), str(self.classes)]

    def _jars(self) -> list[str]:
        return [str(jar) for jar in classpath(self.release)]

    def _args(self) -> list[str]:
        return [f"--spring.config.import=file:{self.properties}", *(f"--{k}={v}" for k, v in self.overrides.items())]

    def _ready(self) -> bool:
        return "Started DroneFly" in self.log()

    def launch(self) -> None:
        self._stopped_at = None
        super().launch()

    def log(self) -> str:
        """Everything Drone Fly logged so far."""
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def errors(self, since: int = 0) -> list[str]:
        """The log's lines from character ``since`` on, up to a :meth:`stop` (whose shutdown noise is Drone
        Fly's own: its consumer is closed from another thread), that report an error (see the invariants)."""
        text = self.log()[since : self._stopped_at]
        return [line for line in text.splitlines() if ERROR_LINE.search(line)]

    def error_blocks(self, since: int = 0) -> list[str]:
        """Each logged error from character ``since`` on (up to a :meth:`stop`) with the lines that follow it
        up to the next log line (its stack trace, its causes): an ERROR line, or a line :meth:`errors` finds
        outside any such block."""
        blocks: list[str] = []
        inside = False
        for line in self.log()[since : self._stopped_at].splitlines():
            starts = bool(LOG_LINE.match(line))
            if starts and re.search(r"\bERROR\b", line):
                blocks.append(line)
                inside = True
            elif inside and not starts:
                blocks[-1] += "\n" + line
            else:
                inside = False
                if ERROR_LINE.search(line):
                    blocks.append(line)
        return blocks

    def stop(self, *, kill: bool = False) -> None:
        """Stop Drone Fly (SIGTERM: Spring's shutdown hooks run) and remember where its log was then."""
        if self.running:
            self._stopped_at = self.mark()
        super().stop(kill=kill)

    def mark(self) -> int:
        """Where the log ends now: pass it to :meth:`errors` to see only what came after."""
        return len(self.log())

    def caught_up(self, kafka: str, topic: str, timeout: float = 180) -> None:
        """Wait until Drone Fly has consumed ``topic`` to its end: its group's committed offsets (Apiary's
        receiver leaves Kafka's auto-commit on, every 5 s) equal the partitions' end offsets. Take a
        :meth:`mark` after it, so what an earlier test published (and the errors it causes) stays before it."""
        group = f"apiary-kafka-metastore-receiver-{self.instance_name}"
        consumer = Consumer({"bootstrap.servers": kafka, "group.id": group, "enable.auto.commit": False})
        try:
            partitions = consumer.list_topics(topic, timeout=30).topics[topic].partitions
            ends = [consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in partitions]

            def consumed() -> bool:
                tps = consumer.committed([TopicPartition(topic, p) for p in partitions], timeout=30)
                return all(max(tp.offset, 0) >= end for tp, end in zip(tps, ends, strict=True))

            wait_for(consumed, f"{self.name} to commit {topic}'s end offsets {ends}", timeout, 0.5)
        finally:
            consumer.close()

    def records(self) -> list[dict[str, object]]:
        """Every callback the recorder wrote so far, in the order Drone Fly called it."""
        return _lines(self.recording)


class HivewireRun:
    """``hivewire run --config <properties> callback_recorder:app``: the Python side, from the same file.

    Its recorder (tests/peers/callback_recorder.py) appends to :attr:`recording` in the Java recorder's format;
    ``args`` are more ``hivewire run`` flags (they win over the file, as Drone Fly's overrides do). The health
    endpoint gets a free port. Output (stdout and stderr) goes to :attr:`log_path`.
    """

    def __init__(self, properties: Path, *, workdir: Path, args: Sequence[str] = ()) -> None:
        self.properties = Path(properties).resolve()
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.recording = self.workdir / "callbacks.jsonl"
        self.log_path = self.workdir / "hivewire-run.log"
        self.port = free_port()
        self.args = list(args)
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 120) -> None:
        """Start it and wait until its health endpoint answers that partitions are assigned."""
        self.recording.touch()
        env = {
            **os.environ,
            RECORDING_ENV: str(self.recording),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])),
        }
        cmd = [sys.executable, "-m", "hivewire", "run", "--config", str(self.properties)]
        cmd += ["--endpoint-port", str(self.port), "--endpoint-address", "127.0.0.1", *self.args, RECORDER_APP]
        with self.log_path.open("ab") as out:
            self._proc = subprocess.Popen(cmd, cwd=self.workdir, env=env, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise HivewireError(f"hivewire run exited with {self._proc.returncode}:\n{self.log_tail()}")
            if self._assigned():
                return
            time.sleep(0.5)
        self.stop()
        raise HivewireError(f"hivewire run got no partition within {timeout:.0f} s:\n{self.log_tail()}")

    @property
    def pid(self) -> int | None:
        """The ``hivewire run`` process's id (for /proc), while it runs."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def _assigned(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as answer:
                return answer.status == 200
        except (OSError, urllib.error.URLError):
            return False

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=20)

    def log_tail(self, lines: int = 60) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def records(self) -> list[dict[str, object]]:
        """Every event the recorder wrote so far, in the order hivewire delivered it."""
        return _lines(self.recording)


def _lines(path: Path) -> list[dict[str, object]]:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def of_database(records: list[dict[str, object]], db: str) -> list[dict[str, object]]:
    """The records of one database (Hive lower-cases names), in their order."""
    return [r for r in records if str(r.get("db") or "").lower() == db.lower()]
