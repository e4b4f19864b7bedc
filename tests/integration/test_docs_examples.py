"""Every block of README.md and docs/ that tests/docs_examples.py does not leave to a test of its own runs
here as written, against local services: the docs' placeholders (``kafka:9092``, ``thrift://hms1:9083``,
``zk1:2181``, ``/lake/hms_events``, ...) are replaced by those of one :class:`~hivewire.tools._stack.LocalStack`
holding what the examples read (``sales.orders``, events on ``apiary``, the metastore registered in ZooKeeper,
under ``hms_prod`` behind a digest ACL too); a Hive installation's ``/etc/hive/conf/hive-site.xml`` by one
naming that metastore.

* ``python`` blocks run in a fresh interpreter (a block of pytest tests under pytest, each of its tests run);
* ``sh`` and ``console`` blocks: each command line (a ``console`` block's ``$`` lines) runs through bash in a
  directory holding the files the docs' commands name (``listeners.py`` from docs/runtime.md,
  ``drone-fly.properties`` from docs/compatibility.md), with the environment ``hivewire local --env-file``
  writes. A command that serves until stopped (``run``, ``shim``, ``tail`` without ``-e``, ...) runs until its
  start line, then gets SIGINT and must exit 0. ``make TARGET`` lines run as ``make -n TARGET``: ``make test``
  is this suite, and ``make demo`` reinstalls the package (``hivewire demo`` is tests/integration/test_shim_demo.py);
* ``properties`` and ``xml`` blocks are read by the command that reads such a file (``check-config``,
  ``discover --hive-site``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import deltalake
import pytest
import sasl_metastore
from deltalake.exceptions import TableNotFoundError
from docs_examples import ROOT, Block, block, blocks
from kafka_certs import Certificates, make_certificates
from sasl_metastore import SaslMetastore
from waiting import wait_for

import hivewire as hw
from hivewire.metastore import DiscoveryConfig, Registration
from hivewire.tools import _testing as testing
from hivewire.tools._local import LocalZooKeeper, free_port
from hivewire.tools._stack import LocalStack

PYTHON = [b for b in blocks() if b.language == "python" and b.runner is None]
SHELL = [b for b in blocks() if b.language in ("sh", "console") and b.runner is None]
FILES = [b for b in blocks() if b.language in ("properties", "xml") and b.runner is None]
BIN = Path(sys.executable).parent  # this environment's `hivewire`


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Placeholder -> real value, for every placeholder the docs' blocks use."""
    with LocalStack(topic="apiary", shim=False) as stack:
        address = stack.metastore.uri.removeprefix("thrift://")
        with hw.MetastoreClient(stack.metastore.uri) as client:
            client.create_database(testing.make_database("sales", location=(stack.workdir / "sales.db").as_uri()))
            client.create_database(testing.make_database("hms", location=(stack.workdir / "hms.db").as_uri()))
            table = testing.make_table("sales", "orders", partition_keys={"dt": "string"})
            client.create_table(table)
            client.add_partitions([testing.make_partition(table, [d]) for d in ("2024-05-01", "2024-05-02")])
        events = [
            testing.make_event(hw.CreateTableEvent, "sales", "orders"),
            testing.make_event(hw.AddPartitionEvent, "sales", "orders"),
            testing.make_event(hw.DropTableEvent, "sales", "returns", delete_data=True),
        ]
        testing.produce(stack.bootstrap_servers, "apiary", events)
        hive_site = stack.workdir / "hive-site.xml"  # a Hive installation's, for MetastoreClient.from_hive_conf
        hive_site.write_text(
            "<configuration>\n  <property><name>metastore.thrift.uris</name>"
            f"<value>{stack.metastore.uri}</value></property>\n</configuration>\n"
        )
        lake = tmp_path_factory.mktemp("lake")
        protected = DiscoveryConfig(stack.zookeeper.quorum, auth_data=(("digest", "reader:secret"),))
        with (
            Registration(address, stack.zookeeper.quorum) as open_,
            Registration(address, protected, "hms_prod", acl="digest:reader:secret:cdrwa") as acl,
        ):
            wait_for(lambda: open_.node and acl.node, "the metastore's registrations", 120)
            yield {
                "/etc/hive/conf/hive-site.xml": str(hive_site),
                "thrift://hms1:9083,thrift://hms2:9083": stack.metastore.uri,
                "thrift://hms1:9083": stack.metastore.uri,
                "thrift://hms:9083": stack.metastore.uri,
                "hms1.example.com:9083": address,
                "zk1:2181,zk2:2181": stack.zookeeper.quorum,
                "zk1:2181": stack.zookeeper.quorum,
                "zk1,zk2,zk3": "127.0.0.1",
                "<value>2181<": f"<value>{stack.zookeeper.port}<",
                "kafka1:9092,kafka2:9092": stack.bootstrap_servers,
                "kafka-1:9092": stack.bootstrap_servers,
                "kafka:9092": stack.bootstrap_servers,
                "broker:9092": stack.bootstrap_servers,
                "=apiary-events": "=apiary",
                "--topic apiary-events": "--topic apiary",
                "port=9083": "port=0",
                "--port 9083": "--port 0",
                "s3://lake/": f"{lake}/",
                "s3a://lake/": f"{lake}/",
                "/lake/": f"{lake}/",
                "spark://spark-master:7077": "local[2]",
                "thrift://metastore:9083": stack.metastore.uri,
                "/tmp/hivewire.env": f"{lake}/hivewire.env",
            }


def _substituted(code: str, services: dict[str, str]) -> str:
    for placeholder, real in services.items():
        code = code.replace(placeholder, real)
    return code


def _environment(**extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(str(ROOT / d) for d in ("sdk", "shim", "thrift")),
        # What docs/data.md tells users: Spark's Python workers must run the interpreter hivewire is installed in.
        "PYSPARK_PYTHON": sys.executable,
        **extra,
    }


@pytest.fixture(scope="module")
def lake(shell: Shell) -> None:
    """The Delta archive docs/data.md's ``hivewire archive`` block writes: its Python blocks read it."""
    archive = block("docs/data.md", "console", "$ hivewire archive ")
    [command] = _commands(archive)
    table = Path(shell.placeholders["/lake/"]) / "hms_events"
    with _serving(_substituted(command, shell.placeholders), STARTED["archive"], shell, archive.name):
        wait_for(lambda: _rows(table) >= 3, "the archive's first commit of the topic's events", 180)


def _rows(table: Path) -> int:
    try:
        return deltalake.DeltaTable(str(table)).to_pyarrow_table().num_rows
    except TableNotFoundError:
        return 0


class _TlsZooKeeper(LocalZooKeeper):
    """A ZooKeeper that also takes TLS connections with client certificates on :attr:`secure_port` (Netty, PEM
    key and trust stores, as docs/discovery.md describes Hive 4's); its plain port serves the readiness check."""

    def __init__(self, workdir: Path, certs: Certificates) -> None:
        self.secure_port = free_port()
        super().__init__(
            workdir=workdir,
            jvm_options=(
                "-Dzookeeper.serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
                f"-Dzookeeper.ssl.keyStore.location={certs.server_keystore}",
                "-Dzookeeper.ssl.keyStore.type=PEM",
                f"-Dzookeeper.ssl.trustStore.location={certs.ca}",
                "-Dzookeeper.ssl.trustStore.type=PEM",
            ),
        )

    def _prepare(self) -> list[str]:
        args = super()._prepare()
        with (self.workdir / "zoo.cfg").open("a") as cfg:
            cfg.write(f"secureClientPort={self.secure_port}\n")
        return args


@pytest.fixture(scope="module")
def tls_zookeeper(services: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """docs/discovery.md's ensemble "with TLS, client certificates and digest credentials": the metastore
    registered under ``hive_metastore`` and, behind a digest ACL, ``hms_prod``; a ``hive-site.xml`` in
    discovery mode naming it. Placeholder -> value, for the blocks that use it."""
    workdir = tmp_path_factory.mktemp("tls-zookeeper")
    certs = make_certificates(workdir / "certs", {"client": None})
    client = workdir / "client.pem"  # certificate and key in one file, as the docs' certfile= and keyfile=
    client.write_text(certs.certificate("client").read_text() + certs.key("client").read_text())
    server = _TlsZooKeeper(workdir / "server", certs)
    server.start()
    quorum = f"127.0.0.1:{server.secure_port}"
    hive_site = workdir / "hive-site.xml"
    properties = {
        "metastore.service.discovery.mode": "zookeeper",
        "metastore.thrift.uris": quorum,
        "metastore.zookeeper.namespace": "hive_metastore",
        "hive.zookeeper.ssl.client.enable": "true",
        "metastore.zookeeper.ssl.keystore.location": str(client),
        "metastore.zookeeper.ssl.keystore.type": "PEM",
        "metastore.zookeeper.ssl.truststore.location": str(certs.ca),
        "metastore.zookeeper.ssl.truststore.type": "PEM",
    }
    hive_site.write_text(
        "<configuration>\n"
        + "".join(f"  <property><name>{k}</name><value>{v}</value></property>\n" for k, v in properties.items())
        + "</configuration>\n"
    )
    tls = DiscoveryConfig(quorum, use_ssl=True, certfile=str(client), keyfile=str(client), ca=str(certs.ca))
    digest = replace(tls, auth_data=(("digest", "reader:secret"),))
    address = services["hms1.example.com:9083"]
    try:
        with (
            Registration(address, tls) as open_,
            Registration(address, digest, "hms_prod", acl="digest:reader:secret:cdrwa") as acl,
        ):
            wait_for(lambda: open_.node and acl.node, "the metastore's registrations over TLS", 120)
            yield {
                "zk1:2281": quorum,
                "/etc/hive/conf/hive-site.xml": str(hive_site),
                '"client.pem"': repr(str(client)),
                '"ca.pem"': repr(str(certs.ca)),
            }
    finally:
        server.close()


#: What ``spark-pipelines run`` does with a pipeline file, in the Spark of this environment: it gives the file a
#: ``spark``, collects the datasets and flows its decorators declare, and runs each flow into its table (here:
#: files of the table's format and partitioning, until the topic's end). spark-pipelines itself needs Spark
#: Connect and the ``pipelines`` extra's gRPC packages, which hivewire's test extras do not install.
PIPELINE = """
import sys
from pathlib import Path

from pyspark.pipelines.graph_element_registry import GraphElementRegistry, graph_element_registration_context
from pyspark.sql import SparkSession


class Registry(GraphElementRegistry):
    def __init__(self):
        self.outputs, self.flows = {}, []

    def register_output(self, output):
        self.outputs[output.name] = output

    def register_flow(self, flow):
        self.flows.append(flow)

    def register_auto_cdc_flow(self, flow):
        raise AssertionError("no Auto CDC flow in the docs")

    def register_sql(self, sql_text, file_path):
        raise AssertionError("no SQL in the docs")


pipeline, out = Path(sys.argv[1]), Path(sys.argv[2])
spark = SparkSession.builder.master("local[2]").getOrCreate()
registry = Registry()
with graph_element_registration_context(registry):
    exec(compile(pipeline.read_text(), str(pipeline), "exec"), {"spark": spark, "__name__": "pipeline"})
assert registry.flows, "the pipeline declares no flow"
for flow in registry.flows:
    table = registry.outputs[flow.target]
    query = (
        flow.func()
        .writeStream.format(table.format)
        .partitionBy(*(table.partition_cols or ()))
        .option("checkpointLocation", str(out / "checkpoints" / table.name))
        .trigger(availableNow=True)
        .start(str(out / table.name))
    )
    query.awaitTermination()
    print(table.name, spark.read.format(table.format).load(str(out / table.name)).count())
"""


@pytest.mark.parametrize("block", PYTHON, ids=lambda b: b.name)
def test_the_example_runs(
    block: Block, services: dict[str, str], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if "/lake/hms_events" in block.code:
        request.getfixturevalue("lake")
    if "use_ssl=True" in block.code:
        services = {**services, **request.getfixturevalue("tls_zookeeper")}
    code = _substituted(block.code, services)
    # A block of pytest tests (docs/runtime.md's "Testing your listeners") is run by pytest, so its tests run.
    tests = "\ndef test_" in f"\n{code}"
    pipeline = "from pyspark import pipelines" in code  # a pipeline file: see PIPELINE
    script = tmp_path / ("test_example.py" if tests else "example.py")
    script.write_text(code)
    command = [sys.executable, str(script)]
    if tests:
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(script)]
    elif pipeline:
        (tmp_path / "pipeline_runner.py").write_text(PIPELINE)
        command = [sys.executable, str(tmp_path / "pipeline_runner.py"), str(script), str(tmp_path / "out")]
    done = subprocess.run(command, cwd=tmp_path, env=_environment(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{block.name} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    if pipeline:  # the topic's events (the fixture's three, and any an earlier block added) in the table
        rows = re.search(r"^events (\d+)$", done.stdout, re.M)
        assert rows is not None and int(rows.group(1)) >= 3, f"{block.name}: {done.stdout[-3000:]}"
    if tests:
        ran = code.count("\ndef test_") + code.startswith("def test_")
        assert f"{ran} passed" in done.stdout, f"{block.name}: not all its tests ran:\n{done.stdout[-3000:]}"


# -- shell blocks -------------------------------------------------------------------------------------------------

#: The line each command that serves until stopped prints once it serves (stdout and stderr together).
STARTED = {
    "run": r"INFO hivewire\.runtime\.runner: assigned \[",
    "shim": r"serving on",
    "local": r"^In another shell:",
    "tail": r"INFO hivewire\.tail: reached the end of",
    "register": r"INFO hivewire\.registration: registered metastore",
    "archive": r"INFO hivewire\.archive: assigned",
    "spark-history": r"INFO \S+: writing \S+ to \S+ \(checkpoint ",
    "bridge": r"INFO hivewire\.bridge: bridging the notification log",
}


@dataclass(frozen=True)
class Shell:
    """The directory the shell blocks run in, with the files they name; their environment and placeholders."""

    cwd: Path
    env: dict[str, str]
    placeholders: dict[str, str]


@pytest.fixture(scope="module")
def shell(services: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Shell:
    cwd = tmp_path_factory.mktemp("shell")
    services = {
        **services,
        "/var/lib/hivewire/": f"{cwd}/var/",
        "/etc/hivewire/": f"{cwd}/etc/",
        ".venv/bin/python": sys.executable,  # README.md's, in a clone where `make install` made .venv
    }
    (cwd / "listeners.py").write_text(block("docs/runtime.md", "python", "# listeners.py\n").code)
    properties = block("docs/compatibility.md", "properties", "apiary.bootstrap.servers=")
    # A deployment's file names its listeners (docs/compatibility.md: hivewire's by import path, same key).
    listeners = "apiary.listener.list=listeners.GlueSync\n"
    (cwd / "drone-fly.properties").write_text(_substituted(properties.code, services) + listeners)
    (cwd / "hivewire.toml").write_text(
        f'[hivewire.shim]\nupstream.uris = "{services["thrift://hms:9083"]}"\n'
        f'[apiary]\nbootstrap.servers = "{services["kafka:9092"]}"\n'
    )
    (cwd / "var" / "spool").mkdir(parents=True)  # docs/shim.md: the spool replay-rejected reads
    home = cwd / "home"
    (home / ".config" / "fish" / "completions").mkdir(parents=True)
    variables = {  # what `hivewire local --env-file` writes (LocalStack.environment()), for this stack
        "APIARY_BOOTSTRAP_SERVERS": services["kafka:9092"],
        "APIARY_KAFKA_TOPIC_NAME": "apiary",
        "METASTORE_THRIFT_URIS": services["thrift://hms:9083"],
    }
    (cwd / "etc").mkdir()  # docs/shim.md: the upstream's SASL password file
    # `discover --hive-site` reads a Hive installation's file in discovery mode: docs/discovery.md's own.
    hive_site = block("docs/discovery.md", "xml", "<configuration>\n")
    (cwd / "etc" / "hive-site.xml").write_text(_substituted(hive_site.code, services))
    services["/etc/hive/conf/hive-site.xml"] = str(cwd / "etc" / "hive-site.xml")
    # A `run` without --endpoint-port serves /metrics on 8008: not on this machine's, beside other tests.
    # apiary.listener.list's listeners.GlueSync is imported from the block's directory, as MODULE:APP's module.
    env = _environment(HOME=str(home), PYTHONUNBUFFERED="1", ENDPOINT_PORT="0", **variables)
    return Shell(cwd, env, services)


def _commands(block: Block) -> list[str]:
    """The command lines of a shell block: continuation lines joined; in a ``console`` block, the ``$`` lines."""
    lines = block.code.replace("\\\n", " ").splitlines()
    if block.language == "console":
        return [line[2:] for line in lines if line.startswith("$ ")]
    return [line for line in lines if line.strip()]


def _serves(command: str) -> str | None:
    """The subcommand of a ``hivewire`` command that serves until stopped, if this is one."""
    words = shlex.split(command, comments=True)
    if not words or words[0] != "hivewire" or len(words) < 2 or words[1] not in STARTED:
        return None
    if words[1] == "tail" and ("-e" in words or "--exit" in words):
        return None
    return words[1]


def _hivewire_processes(pid: int) -> list[int]:
    """``pid`` if it is the ``hivewire`` process (bash runs a lone command in its own process), else bash's
    ``hivewire`` children (in a pipeline, ``hivewire tail ... | jq .``: jq then ends on hivewire's end)."""
    if _is_hivewire(pid):
        return [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(c) for c in children if _is_hivewire(int(c))]


def _is_hivewire(pid: int) -> bool:
    """The ``hivewire`` script runs as ``python .../bin/hivewire ...`` (bash's own argv holds it as text)."""
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:2]
    return any(Path(os.fsdecode(arg)).name == "hivewire" for arg in argv)


@contextlib.contextmanager
def _serving(command: str, start: str, shell: Shell, name: str) -> Iterator[None]:
    """Run ``command`` until a line matches ``start``; on leaving, Ctrl-C's SIGINT to it: it must exit 0."""
    process = subprocess.Popen(
        ["bash", "-c", command],
        cwd=shell.cwd,
        env=shell.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    seen: list[str] = []
    started = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            seen.append(line)
            if re.search(start, line):
                started.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 240
        while not started.wait(1) and process.poll() is None and time.monotonic() < deadline:
            pass
        assert started.is_set(), f"{name}: {command}: no start line ({start!r}):\n{''.join(seen)}"
        yield
        targets = _hivewire_processes(process.pid)
        assert targets, f"{name}: {command}: no hivewire process"
        for pid in targets:
            os.kill(pid, signal.SIGINT)
        process.wait(timeout=120)
        reader.join(10)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 0, f"{name}: {command}: exit {process.returncode} after SIGINT:\n{''.join(seen)}"


@pytest.mark.parametrize("block", SHELL, ids=lambda b: b.name)
def test_the_shell_block_runs(block: Block, shell: Shell, request: pytest.FixtureRequest) -> None:
    cwd, env = shell.cwd, shell.env
    placeholders = {**shell.placeholders, "--endpoint-port 8008": f"--endpoint-port {free_port()}"}
    if "--upstream-sasl-mechanism" in block.code:  # docs/shim.md: a metastore that takes SASL connections only
        sasl: SaslMetastore = request.getfixturevalue("sasl_metastore")
        (cwd / "etc" / "hms-password").write_text(sasl_metastore.PASSWORD)
        placeholders = {
            "thrift://hms:9083": sasl.uri,
            "--upstream-sasl-username hivewire": f"--upstream-sasl-username {sasl_metastore.USER}",
            **placeholders,
        }
    commands = [_substituted(command, placeholders) for command in _commands(block)]
    assert commands, f"{block.name}: no command"
    with contextlib.ExitStack() as background:
        _run_commands(block, commands, replace(shell, env=env), background)


def _run_commands(block: Block, commands: list[str], shell: Shell, background: contextlib.ExitStack) -> None:
    cwd, env = shell.cwd, shell.env
    for command in commands:
        if command.startswith("make "):
            command = command.replace("make ", "make -n -C " + shlex.quote(str(ROOT)) + " ", 1)
        if command.startswith("source "):  # docs/cli.md: the other shell reads the env file `local` wrote
            done = subprocess.run(
                ["bash", "-ec", f"{command}\nenv -0"], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
            )
            assert done.returncode == 0, f"{block.name}: {command}: {done.stderr}"
            env = dict(item.split("=", 1) for item in done.stdout.split("\0") if "=" in item)
            continue
        if command.startswith('eval "$(') and "zsh_source" in command:
            # zsh's line: bash cannot eval a zsh script (nor is zsh installed here); its script is made.
            command = command.split('"$(', 1)[1].split(')"', 1)[0] + " | grep '^#compdef hivewire$' >/dev/null"
        subcommand = _serves(command)
        if subcommand == "local":  # docs/cli.md: serves the block's other commands, "in another shell"
            background.enter_context(_serving(command, STARTED[subcommand], replace(shell, env=env), block.name))
            continue
        if subcommand is not None:
            with _serving(command, STARTED[subcommand], replace(shell, env=env), block.name):
                pass
            continue
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, f"{block.name}: {command}: exit {done.returncode}:\n{done.stdout}{done.stderr}"


# -- files the commands read --------------------------------------------------------------------------------------


@pytest.mark.parametrize("block", FILES, ids=lambda b: b.name)
def test_the_file_is_read(block: Block, services: dict[str, str], shell: Shell) -> None:
    cwd, env = shell.cwd, _environment()  # not the stack's variables: what is read comes from the file
    if block.language == "properties":  # docs/compatibility.md: the properties of a `hivewire run`
        path = cwd / "example.properties"
        command = ["hivewire", "check-config", "run", "listeners:app", "--config", str(path)]
        expected = services["kafka:9092"]
    else:  # docs/discovery.md: a hive-site.xml in discovery mode
        path = cwd / "hive-site.xml"
        command = ["hivewire", "discover", "--hive-site", str(path)]
        expected = services["thrift://hms:9083"]
    path.write_text(_substituted(block.code, services))
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{block.name}: {' '.join(command)}:\n{done.stdout}{done.stderr}"
    assert expected in done.stdout, f"{block.name}: {' '.join(command)}:\n{done.stdout}"
