"""Kafka security for real: a broker with a SASL_SSL listener (SCRAM-SHA-512), an mTLS listener and ACLs.

``secure`` is an Apache Kafka broker (KRaft, Maven Central's jars) offering, beside its PLAINTEXT listener (its
``ANONYMOUS`` principal is a super user: the controller, and this test's own admin client and producer), a
``SECURE`` listener (SASL_SSL, SCRAM-SHA-512, the user ``hivewire`` written when the storage is formatted) and an
``MTLS`` listener (TLS with ``ssl.client.auth=required``: the certificate's CN is the principal), PEM key and
trust stores made here with the openssl command (``tests/kafka_certs.py``), and the ACL-enforcing
``StandardAuthorizer`` with ``allow.everyone.if.no.acl.found=false``. Every test grants the ACLs it needs.

The ``hivewire`` commands run as real processes, at DEBUG, their secrets given as ``file:`` and ``env:``: the
SCRAM password in a file, the client key's password in an environment variable. No output may show either, nor
a line of the client's key. A wrong password, an untrusted certificate and a missing ACL each stop a command
with exit status 1 and one line saying what to check; the shim keeps serving, spools, and says so once.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as KafkaPartition
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)
from kafka_certs import PRINCIPAL_MAPPING_RULES, Certificates, make_certificates
from waiting import wait_for

import hivewire as hw
from hivewire.tools._kafka_broker import KafkaBroker
from hivewire.tools._local import LocalMetastore
from hivewire.tools._testing import create_table_event, make_database, make_table, produce

SCRAM_USER = "hivewire"
SCRAM_PASSWORD = "Scram-s3cret-" + uuid.uuid4().hex[:12]
KEY_PASSWORD = "Key-s3cret-" + uuid.uuid4().hex[:12]
CLIENT = "hwclient"  # the mTLS client's CN, so its principal


@dataclass
class SecureKafka:
    broker: KafkaBroker
    certs: Certificates
    password_file: Path
    admin: AdminClient

    @property
    def plaintext(self) -> str:
        return self.broker.bootstrap_servers

    @property
    def sasl_ssl(self) -> str:
        return self.broker.address("SECURE")

    @property
    def mtls(self) -> str:
        return self.broker.address("MTLS")

    def sasl_flags(self, password: str | None = None) -> list[str]:
        """-X settings for the SASL_SSL listener, the password from a file (``password``: a wrong one)."""
        secret = self.password_file
        if password is not None:
            secret = self.certs.directory / f"wrong-{uuid.uuid4().hex[:6]}"
            secret.write_text(password + "\n")
        return _x(
            "security.protocol=SASL_SSL",
            "sasl.mechanism=SCRAM-SHA-512",
            f"sasl.username={SCRAM_USER}",
            f"sasl.password=file:{secret}",
            f"ssl.ca.location={self.certs.ca}",
        )

    def mtls_flags(self, client: str = CLIENT, ca: Path | None = None) -> list[str]:
        """-X settings for the mTLS listener, the key's password from the environment (HW_TEST_KEY_PASSWORD)."""
        flags = [
            "security.protocol=SSL",
            f"ssl.ca.location={ca or self.certs.ca}",
            f"ssl.certificate.location={self.certs.certificate(client)}",
            f"ssl.key.location={self.certs.key(client)}",
        ]
        if client == CLIENT:
            flags.append("ssl.key.password=env:HW_TEST_KEY_PASSWORD")
        return _x(*flags)

    def grant(self, principal: str, operations: tuple[str, ...], *, topic: str = "", group: str = "") -> None:
        """Allow ``principal`` the ``operations`` on a topic or a group (literal names)."""
        kind, name = (ResourceType.TOPIC, topic) if topic else (ResourceType.GROUP, group)
        acls = [
            AclBinding(
                kind, name, ResourcePatternType.LITERAL, principal, "*", AclOperation[op], AclPermissionType.ALLOW
            )
            for op in operations
        ]
        for future in self.admin.create_acls(acls).values():
            future.result(60)

    def topic(self, name: str, partitions: int = 4) -> str:
        self.broker.create_topic(name, partitions)
        return name

    def records(self, topic: str) -> list[bytes]:
        """Every record of ``topic`` now (read over PLAINTEXT), in partition and offset order."""
        consumer = Consumer({"bootstrap.servers": self.plaintext, "group.id": f"check-{uuid.uuid4().hex}"})
        try:
            found = consumer.list_topics(topic, timeout=10).topics.get(topic)
            if found is None or found.error is not None:
                return []
            out: list[bytes] = []
            for p in sorted(found.partitions):
                low, high = consumer.get_watermark_offsets(KafkaPartition(topic, p), timeout=10)
                if high <= low:
                    continue
                consumer.assign([KafkaPartition(topic, p, low)])
                while True:
                    message = consumer.poll(10)
                    assert message is not None and message.error() is None, f"reading {topic}/{p}"
                    out.append(message.value() or b"")
                    if (message.offset() or 0) + 1 >= high:
                        break
            return out
        finally:
            consumer.close()


def _x(*settings: str) -> list[str]:
    return [arg for setting in settings for arg in ("-X", setting)]


@pytest.fixture(scope="module")
def secure(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureKafka]:
    workdir = tmp_path_factory.mktemp("secure-kafka")
    certs = make_certificates(workdir / "certs", {CLIENT: KEY_PASSWORD})
    password_file = workdir / "scram-password"
    password_file.write_text(SCRAM_PASSWORD + "\n")  # as a mounted secret: with its newline
    broker = KafkaBroker(
        workdir=workdir / "kafka",
        listeners={"SECURE": "SASL_SSL", "MTLS": "SSL"},
        properties={
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(certs.server_keystore),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(certs.ca),
            "listener.name.mtls.ssl.client.auth": "required",
            "ssl.principal.mapping.rules": PRINCIPAL_MAPPING_RULES,
            "sasl.enabled.mechanisms": "SCRAM-SHA-512",
            "listener.name.secure.scram-sha-512.sasl.jaas.config": (
                "org.apache.kafka.common.security.scram.ScramLoginModule required;"
            ),
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "allow.everyone.if.no.acl.found": "false",
            "super.users": "User:ANONYMOUS",
            "auto.create.topics.enable": "false",  # topics are made by the tests' admin, never by a client
        },
        scram_users={SCRAM_USER: SCRAM_PASSWORD},
    )
    broker.start()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    yield SecureKafka(broker, certs, password_file, admin)
    broker.stop(kill=True)


@dataclass
class Ran:
    returncode: int
    output: str


def hivewire(args: list[str], log: Path, timeout: float = 180) -> Ran:
    """Run ``hivewire`` at DEBUG to its end (stdout and stderr into ``log``)."""
    proc = start(args, log)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"hivewire {args[0]} did not stop within {timeout:.0f} s:\n{log.read_text()}") from None
    return Ran(proc.returncode, log.read_text(errors="replace"))


def start(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "hivewire", "--log-level", "DEBUG", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "HW_TEST_KEY_PASSWORD": KEY_PASSWORD, "PYTHONPATH": os.pathsep.join(sys.path)},
            cwd=log.parent,
        )


def stop(proc: subprocess.Popen[bytes]) -> int:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(90)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def assert_no_secret(name: str, text: str, certs: Certificates) -> None:
    key_lines = [line for line in certs.key(CLIENT).read_text().splitlines() if len(line) > 40]
    for secret in (SCRAM_PASSWORD, KEY_PASSWORD, *key_lines):
        assert secret not in text, f"{name}'s output shows a secret:\n" + "\n".join(
            line for line in text.splitlines() if secret in line
        )


def one_line(ran: Ran, *needles: str) -> str:
    """The command stopped with status 1 and one line holding every one of ``needles``; that line."""
    assert ran.returncode == 1, f"exit status {ran.returncode}:\n{ran.output[-4000:]}"
    lines = [line for line in ran.output.splitlines() if all(n in line for n in needles)]
    assert len(lines) == 1, f"{len(lines)} lines hold {needles}:\n{ran.output[-4000:]}"
    assert " is unreachable" not in ran.output, ran.output[-4000:]  # no misleading second line
    return lines[0]


LISTENERS = """
import os
import re
import hivewire as hw

app = hw.App("secure")

@app.on_create_table
def record(event):
    with open("handled.txt", "a") as f:
        f.write(event.qualified_name + "\\n")

@app.on_create_table
def picky(event):
    if not os.path.exists("fixed"):
        raise RuntimeError("not yet")
    with open("replayed.txt", "a") as f:
        f.write(event.qualified_name + "\\n")
"""


def write_listeners(directory: Path) -> None:
    (directory / "secure_listeners.py").write_text(LISTENERS)


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


# -- every command through SASL_SSL and mTLS ---------------------------------------------------------------


def test_run_dlq_replay_tail_and_archive_through_sasl_ssl_and_mtls(
    secure: SecureKafka, tmp_path: Path, unique: str
) -> None:
    topic, group, archive_group = secure.topic(f"sec-{unique}"), f"g-{unique}", f"a-{unique}"
    dlq = secure.topic(f"{topic}.dlq")
    user, client = f"User:{SCRAM_USER}", f"User:{CLIENT}"
    secure.grant(user, ("READ", "DESCRIBE"), topic=topic)
    secure.grant(user, ("WRITE", "DESCRIBE"), topic=dlq)
    secure.grant(user, ("READ",), group=group)
    secure.grant(user, ("READ",), group=archive_group)
    secure.grant(client, ("READ", "DESCRIBE"), topic=topic)
    secure.grant(client, ("READ", "DESCRIBE"), topic=dlq)
    # dlq replay keeps its record of what it replayed in <dlq>.replays: the replaying principal reads and writes it
    replays = secure.topic(f"{dlq}.replays")
    secure.grant(client, ("READ", "WRITE", "DESCRIBE"), topic=replays)
    produce(secure.plaintext, topic, [create_table_event(unique, f"t{i}") for i in range(3)])
    write_listeners(tmp_path)
    logs = {name: tmp_path / f"{name}.log" for name in ("run", "replay", "tail", "archive")}

    # run, through SASL_SSL (the password from a file): each event handled, and dead-lettered by `picky`
    run = start(
        ["run", "secure_listeners:app", "--bootstrap-servers", secure.sasl_ssl, "--topic", topic, "--group", group,
         "--from-beginning", "--endpoint-port", "0", *secure.sasl_flags(), "--set", "hivewire.retry.max.attempts=1"],
        logs["run"],
    )  # fmt: skip
    try:
        wait_for(lambda: len(secure.records(dlq)) == 3 or run.poll() is not None, "3 dead letters", timeout=240)
        assert run.poll() is None, logs["run"].read_text()
    finally:
        assert stop(run) == 0, logs["run"].read_text()
    assert sorted(lines(tmp_path / "handled.txt")) == [f"{unique}.t{i}" for i in range(3)]

    # dlq replay, through mTLS (the key's password from the environment): `picky` takes them now
    (tmp_path / "fixed").touch()
    replay = hivewire(
        ["dlq", "replay", "secure_listeners:app", "--bootstrap-servers", secure.mtls, "--topic", topic,
         *secure.mtls_flags()],
        logs["replay"],
    )  # fmt: skip
    assert replay.returncode == 0, replay.output
    assert sorted(lines(tmp_path / "replayed.txt")) == [f"{unique}.t{i}" for i in range(3)]

    # tail, through mTLS
    tail = hivewire(
        ["tail", "--bootstrap-servers", secure.mtls, "--topic", topic, "--from-beginning", "-e", *secure.mtls_flags()],
        logs["tail"],
    )
    assert tail.returncode == 0, tail.output
    assert sum(f"{unique}.t" in line and "CREATE_TABLE" in line for line in tail.output.splitlines()) == 3

    # archive, through SASL_SSL: every event in the Delta table
    table = tmp_path / "archive"
    archive = start(
        ["archive", "--bootstrap-servers", secure.sasl_ssl, "--topic", topic, "--group", archive_group,
         "--table", str(table), "--flush-seconds", "1", *secure.sasl_flags()],
        logs["archive"],
    )  # fmt: skip
    try:
        wait_for(lambda: archived(table) == 3 or archive.poll() is not None, "3 archived rows", timeout=240)
        assert archive.poll() is None, logs["archive"].read_text()
    finally:
        assert stop(archive) == 0, logs["archive"].read_text()

    for name, log in logs.items():
        text = log.read_text(errors="replace")
        assert " DEBUG " in text, f"{name} logged nothing at DEBUG"
        assert_no_secret(name, text, secure.certs)


def archived(table: Path) -> int:
    if not (table / "_delta_log").exists():
        return 0
    from deltalake import DeltaTable

    return int(DeltaTable(str(table)).to_pyarrow_table().num_rows)


def test_the_bridge_publishes_through_sasl_ssl(
    secure: SecureKafka, recorded_metastore: object, tmp_path: Path, unique: str
) -> None:
    from test_notification_log import current_id

    uri = getattr(recorded_metastore, "uri")  # noqa: B009 (RecordedMetastore: tests/oracle.py)
    topic = secure.topic(f"bridge-{unique}")
    secure.grant(f"User:{SCRAM_USER}", ("WRITE", "READ", "DESCRIBE"), topic=topic)
    first = current_id(uri) + 1
    with hw.MetastoreClient(uri) as client:
        client.create_database(make_database(unique))
        for t in range(3):
            client.create_table(make_table(unique, f"t{t}"))
    checkpoint = tmp_path / "checkpoint"
    command = ["bridge", "--to-kafka", "--until-end", "--bootstrap-servers", secure.sasl_ssl, "--topic", topic,
               "--metastore-uris", uri, "--checkpoint", str(checkpoint), *secure.sasl_flags()]  # fmt: skip
    for attempt in range(2):
        # The second run starts from the same checkpoint: it reads the records back (its consumer, through
        # SASL_SSL too) and publishes none of them again.
        checkpoint.write_text(f'{{"eventId": {first - 1}, "offsets": {{}}}}')
        ran = hivewire(command, tmp_path / f"bridge-{attempt}.log")
        assert ran.returncode == 0, ran.output
        assert_no_secret("bridge", ran.output, secure.certs)
        records = [hw.apiary.decode(value) for value in secure.records(topic)]
        assert sorted(e.qualified_name for e in records) == [unique, *(f"{unique}.t{t}" for t in range(3))]


# -- what stops a command with one line --------------------------------------------------------------------


def test_a_wrong_password_stops_run_with_one_line(secure: SecureKafka, tmp_path: Path, unique: str) -> None:
    topic = secure.topic(f"sec-{unique}")
    write_listeners(tmp_path)
    ran = hivewire(
        ["run", "secure_listeners:app", "--bootstrap-servers", secure.sasl_ssl, "--topic", topic,
         "--endpoint-port", "0", *secure.sasl_flags(password="Wrong-" + SCRAM_PASSWORD[::-1])],
        tmp_path / "run.log",
    )  # fmt: skip
    line = one_line(ran, "refused the SASL SCRAM-SHA-512 credentials of User:hivewire")
    assert "apiary.messaging.consumer.sasl.password" in line
    assert SCRAM_PASSWORD[::-1] not in ran.output
    assert_no_secret("run", ran.output, secure.certs)


def test_an_untrusted_certificate_stops_tail_and_archive_with_one_line(
    secure: SecureKafka, tmp_path: Path, unique: str
) -> None:
    topic = secure.topic(f"sec-{unique}")
    # the client does not trust the broker's certificate (another CA)
    tail = hivewire(
        ["tail", "--bootstrap-servers", secure.mtls, "--topic", topic, "-e",
         *secure.mtls_flags(ca=secure.certs.other_ca)],
        tmp_path / "tail.log",
    )  # fmt: skip
    line = one_line(tail, "could not verify the certificate of Kafka")
    assert "apiary.messaging.consumer.ssl.ca.location" in line
    # the broker does not trust the client's certificate (signed by another CA)
    archive = hivewire(
        ["archive", "--bootstrap-servers", secure.mtls, "--topic", topic, "--table", str(tmp_path / "t"),
         *secure.mtls_flags(client="stranger")],
        tmp_path / "archive.log",
    )  # fmt: skip
    line = one_line(archive, "refused this client's certificate")
    assert "apiary.messaging.consumer.ssl.certificate.location" in line
    for ran in (tail, archive):
        assert_no_secret("tail/archive", ran.output, secure.certs)


def test_a_missing_acl_stops_run_and_archive_with_one_line_and_loses_nothing(
    secure: SecureKafka, tmp_path: Path, unique: str
) -> None:
    topic, group = secure.topic(f"sec-{unique}"), f"g-{unique}"
    dlq = secure.topic(f"{topic}.dlq")
    user = f"User:{SCRAM_USER}"
    secure.grant(user, ("READ", "DESCRIBE"), topic=topic)
    secure.grant(user, ("READ",), group=group)
    produce(secure.plaintext, topic, [create_table_event(unique, "t")])
    write_listeners(tmp_path)
    command = ["run", "secure_listeners:app", "--bootstrap-servers", secure.sasl_ssl, "--topic", topic,
               "--group", group, "--from-beginning", "--endpoint-port", "0", *secure.sasl_flags(),
               "--set", "hivewire.retry.max.attempts=1"]  # fmt: skip
    # no WRITE on the dead-letter topic: `picky`'s dead letter is refused
    ran = hivewire(command, tmp_path / "run.log")
    line = one_line(ran, f"denies WRITE on topic {dlq} to User:hivewire")
    assert f"--allow-principal User:hivewire --operation WRITE --topic {dlq}" in line
    assert secure.records(dlq) == []
    # nothing was lost: once granted, the next run dead-letters that event (its offset was not committed); this
    # one is configured as Drone Fly is, with Java's consumer properties (a JAAS line from a file, a PEM trust store)
    secure.grant(user, ("WRITE", "DESCRIBE"), topic=dlq)
    jaas = tmp_path / "kafka-jaas"
    jaas.write_text(
        'org.apache.kafka.common.security.scram.ScramLoginModule required username="hivewire" '
        f'password="{SCRAM_PASSWORD}";\n'
    )
    consumer = "apiary.messaging.consumer."
    (tmp_path / "drone-fly.properties").write_text(
        f"apiary.bootstrap.servers={secure.sasl_ssl}\napiary.kafka.topic.name={topic}\n"
        f"{consumer}group.id={group}\n{consumer}auto.offset.reset=earliest\n"
        f"{consumer}security.protocol=SASL_SSL\n{consumer}sasl.mechanism=SCRAM-SHA-512\n"
        f"{consumer}sasl.jaas.config=file:{jaas}\n"
        f"{consumer}ssl.truststore.type=PEM\n{consumer}ssl.truststore.location={secure.certs.ca}\n"
        "hivewire.retry.max.attempts=1\n"
    )
    drone_fly = ["run", "secure_listeners:app", "--config", "drone-fly.properties", "--endpoint-port", "0"]
    again = start(drone_fly, tmp_path / "run-again.log")
    try:
        wait_for(lambda: len(secure.records(dlq)) == 1 or again.poll() is not None, "the dead letter", timeout=240)
    finally:
        assert stop(again) == 0, (tmp_path / "run-again.log").read_text()
    assert hw.apiary.decode(secure.records(dlq)[0]).qualified_name == f"{unique}.t"
    # no READ on the archive's group
    archive = hivewire(
        ["archive", "--bootstrap-servers", secure.sasl_ssl, "--topic", topic, "--group", f"nope-{unique}",
         "--table", str(tmp_path / "t"), *secure.sasl_flags()],
        tmp_path / "archive.log",
    )  # fmt: skip
    one_line(archive, f"denies READ on group nope-{unique} to User:hivewire")
    for done in (ran, archive):
        assert_no_secret("run/archive", done.output, secure.certs)
    assert_no_secret("run (Drone Fly)", (tmp_path / "run-again.log").read_text(), secure.certs)


# -- the shim: it spools and says so once ---------------------------------------------------------------------


def test_the_shim_publishes_through_sasl_ssl_and_spools_when_refused(
    secure: SecureKafka, metastore: LocalMetastore, tmp_path: Path, unique: str
) -> None:
    topic = secure.topic(f"shim-{unique}")
    secure.grant(f"User:{SCRAM_USER}", ("WRITE", "DESCRIBE"), topic=topic)
    cases = [
        ("good", secure.sasl_ssl, secure.sasl_flags()),
        ("wrong", secure.sasl_ssl, secure.sasl_flags(password="Wrong-password-1")),
        ("denied", secure.mtls, secure.mtls_flags()),  # the mTLS principal may not write to the topic
    ]
    for name, servers, flags in cases:
        port = hw_free_port()
        log = tmp_path / f"shim-{name}.log"
        shim = start(
            ["shim", "--upstream", metastore.uri, "--bind", "127.0.0.1", "--port", str(port),
             "--kafka-bootstrap-servers", servers, "--topic", topic,
             "--spool-dir", str(tmp_path / f"spool-{name}"), *flags],
            log,
        )  # fmt: skip
        try:
            wait_for(lambda p=port, s=shim: _listens(p) or s.poll() is not None, "the shim", timeout=120)
            assert shim.poll() is None, log.read_text()
            with hw.MetastoreClient(f"thrift://127.0.0.1:{port}", timeout=60) as client:
                client.create_database(make_database(f"{unique}_{name}"))  # never fails for Kafka's sake
            if name == "good":
                wait_for(lambda: secure.records(topic), "the shim's event", timeout=120)
            else:
                wait_for(lambda lg=log: "Kafka at" in lg.read_text(), "the shim's refusal", timeout=120)
                time.sleep(5)  # a few more producer retries, which must not say it again
        finally:
            assert stop(shim) == 0, log.read_text()
        text = log.read_text(errors="replace")
        assert_no_secret(f"shim ({name})", text, secure.certs)
        if name != "good":
            said = [line for line in text.splitlines() if f"Kafka at {servers}" in line]
            assert len(said) == 1, text[-4000:]  # said once, however often the producer tries again
            expected = (
                "refused the SASL SCRAM-SHA-512 credentials" if name == "wrong" else f"denies WRITE on topic {topic}"
            )
            assert expected in said[0] and "wait in the spool" in said[0], said[0]
            if name == "wrong":
                assert "hivewire.shim.producer.sasl.password" in said[0]
            assert "stay in the spool" in text  # the event is kept for the next start
            assert "does not exist" not in text  # a topic the principal may not see is not called missing
    names = [hw.apiary.decode(value).db_name for value in secure.records(topic)]
    assert names == [f"{unique}_good"]


def _listens(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        return True
    return False


def hw_free_port() -> int:
    from hivewire.tools._local import free_port

    return free_port()


# -- the docs' example and the Spark source ---------------------------------------------------------------------


def docs_example() -> str:
    """The shell block of docs/cli.md's "Kafka with SASL/TLS"."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    match = re.search(r"<!-- example: kafka-sasl-tls [^\n]*-->\n```sh\n(.*?)^```", text, re.S | re.M)
    assert match is not None, "docs/cli.md has no kafka-sasl-tls example"
    return match.group(1)


def test_the_docs_example_runs(secure: SecureKafka, tmp_path: Path, unique: str) -> None:
    topic = secure.topic("apiary")
    for principal in (f"User:{SCRAM_USER}", f"User:{CLIENT}"):
        secure.grant(principal, ("READ", "DESCRIBE"), topic=topic)
    produce(secure.plaintext, topic, [create_table_event(unique, "docs")])
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "kafka-password").write_text(secure.password_file.read_text())
    (secrets / "ca.pem").write_text(secure.certs.ca.read_text())
    (secrets / "client.pem").write_text(secure.certs.certificate(CLIENT).read_text())
    (secrets / "client.key").write_text(secure.certs.key(CLIENT).read_text())
    bin_dir = Path(sys.executable).parent  # the `hivewire` script of this environment
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", docs_example()],
        capture_output=True,
        text=True,
        timeout=300,
        env={
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "KAFKA_SASL_SSL": secure.sasl_ssl,
            "KAFKA_MTLS": secure.mtls,
            "SECRETS": str(secrets),
            "KAFKA_KEY_PASSWORD": KEY_PASSWORD,
        },
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert sum(f"{unique}.docs" in line for line in done.stdout.splitlines()) == 2, done.stdout  # once per command


SPARK_READ = """
import re
import sys
from pyspark.sql import SparkSession
import hivewire.spark as hw_spark

servers, topic, options = sys.argv[1], sys.argv[2], dict(a.split("=", 1) for a in sys.argv[3:])
spark = (SparkSession.builder.master("local[1]").appName("kafka-security")
         .config("spark.ui.enabled", "false").config("spark.python.authenticate.socketTimeout", "300s")
         .getOrCreate())
hw_spark.register(spark)
reader = spark.read.format("hivewire").option("kafka.bootstrap.servers", servers).option("topic", topic)
for key, value in options.items():
    reader = reader.option(key, value)
rows = reader.load().select("db_name", "table_name").collect()
print("ROWS", sorted(f"{r.db_name}.{r.table_name}" for r in rows))
spark.stop()
"""


def test_the_spark_source_reads_through_mtls(secure: SecureKafka, tmp_path: Path, unique: str) -> None:
    topic = secure.topic(f"spark-{unique}", partitions=2)
    secure.grant(f"User:{CLIENT}", ("READ", "DESCRIBE"), topic=topic)
    # the source joins no group, but its consumer looks its group up and fails a read without this ACL
    secure.grant(f"User:{CLIENT}", ("READ",), group="hivewire-spark")
    produce(secure.plaintext, topic, [create_table_event(unique, f"t{i}") for i in range(3)])
    done = spark_read(SPARK_READ, secure, secure.mtls, topic, secure.mtls_flags(), tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    assert f"ROWS {[f'{unique}.t{i}' for i in range(3)]}" in done.stdout


SPARK_READ_OR_REFUSAL = SPARK_READ.replace(
    'rows = reader.load().select("db_name", "table_name").collect()',
    """try:
    rows = reader.load().select("db_name", "table_name").collect()
except Exception as e:  # Spark wraps the source's error in its own, with Python and JVM tracebacks
    found = re.finditer(r"(could not verify the certificate of )?Kafka at \\S+ .*", str(e))
    refused = sorted({m.group(0).strip() for m in found})
    print("REFUSED", len(refused), refused[0] if refused else str(e)[-3000:])
    sys.exit(1)""",
)


def spark_read(
    script: str, secure: SecureKafka, servers: str, topic: str, flags: list[str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """Run ``script`` (SPARK_READ or SPARK_READ_OR_REFUSAL) in its own Spark: ``flags`` are a command's
    ``-X key=value`` pairs, given as ``kafka.key=value`` options; the key's password from the environment, read
    on the driver and in the executor's Python workers. Nothing it prints may hold a secret."""
    path = cwd / "spark_read.py"
    path.write_text(script)
    done = subprocess.run(
        [sys.executable, str(path), servers, topic, *(f"kafka.{setting}" for setting in flags[1::2])],
        capture_output=True,
        text=True,
        timeout=600,
        env={
            **os.environ,
            "HW_TEST_KEY_PASSWORD": KEY_PASSWORD,
            "PYSPARK_PYTHON": sys.executable,
            "PYTHONPATH": os.pathsep.join(sys.path),
        },
        cwd=cwd,
    )
    assert_no_secret("spark", done.stdout + done.stderr, secure.certs)
    return done


def refusal(done: subprocess.CompletedProcess[str]) -> str:
    """The one REFUSED line of a read that failed."""
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-6000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("REFUSED"))
    assert line.startswith("REFUSED 1 "), line  # one line, however often Spark repeats it
    return line


def test_the_spark_sources_read_through_sasl_ssl_with_exactly_the_documented_grants(
    secure: SecureKafka, tmp_path: Path, unique: str
) -> None:
    """docs/data.md's grants: READ on the topic and READ on the group hivewire-spark; one missing, one line."""
    user = f"User:{SCRAM_USER}"

    def read(topic: str) -> subprocess.CompletedProcess[str]:
        return spark_read(SPARK_READ_OR_REFUSAL, secure, secure.sasl_ssl, topic, secure.sasl_flags(), tmp_path)

    topic = secure.topic(f"spark-sasl-{unique}", partitions=2)
    produce(secure.plaintext, topic, [create_table_event(unique, f"t{i}") for i in range(3)])
    secure.grant(user, ("READ",), topic=topic)
    line = refusal(read(topic))
    assert f"denies READ on group hivewire-spark to {user}" in line, line
    assert "--operation READ --group hivewire-spark" in line, line

    secure.grant(user, ("READ",), group="hivewire-spark")
    done = read(topic)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    assert f"ROWS {[f'{unique}.t{i}' for i in range(3)]}" in done.stdout

    # the group granted, the topic not
    other = secure.topic(f"spark-sasl-other-{unique}", partitions=1)
    line = refusal(read(other))
    assert f"denies READ on topic {other} to {user}" in line and f"--operation READ --topic {other}" in line, line


def test_the_spark_sources_plan_refuses_a_missing_group_grant_every_time(secure: SecureKafka, unique: str) -> None:
    """The group's refusal is the driver's, when it plans the read: an executor's read meets it only if it comes
    before the read ends (CI once read all rows without the grant). librdkafka answers the driver's
    committed() with a timeout and serves the refusal to poll(): planning must still raise it, at once."""
    from hivewire.data._spark_options import SourceOptions
    from hivewire.data._spark_plan import watermarks

    topic = secure.topic(f"spark-plan-{unique}", partitions=2)
    secure.grant(f"User:{SCRAM_USER}", ("READ",), topic=topic)
    group = f"spark-plan-{unique}"  # its own: the test above grants hivewire-spark, and grants outlive tests
    # the -X settings as the source's kafka.* options, as spark_read gives them
    given = dict(f"kafka.{setting}".split("=", 1) for setting in secure.sasl_flags()[1::2])
    options = SourceOptions.parse({**given, "topic": topic, "kafka.bootstrap.servers": secure.sasl_ssl,
                                   "kafka.group.id": group, "timeoutSeconds": "600"})  # fmt: skip
    for _ in range(3):
        with pytest.raises(hw.HivewireError) as exc:
            watermarks(options)
        assert f"denies READ on group {group} to User:{SCRAM_USER}" in str(exc.value), exc.value
    secure.grant(f"User:{SCRAM_USER}", ("READ",), group=group)
    assert set(watermarks(options)) == {0, 1}  # granted: planned


def test_a_wrong_password_or_an_untrusted_certificate_fails_the_spark_read_with_one_line(
    secure: SecureKafka, tmp_path: Path, unique: str
) -> None:
    topic = secure.topic(f"spark-refused-{unique}", partitions=1)

    def refused(servers: str, flags: list[str]) -> str:
        return refusal(spark_read(SPARK_READ_OR_REFUSAL, secure, servers, topic, flags, tmp_path))

    wrong = "Wrong-" + SCRAM_PASSWORD[::-1]
    line = refused(secure.sasl_ssl, secure.sasl_flags(password=wrong))
    assert "refused the SASL SCRAM-SHA-512 credentials of User:hivewire" in line, line
    assert "kafka.sasl.password" in line and SCRAM_PASSWORD[::-1] not in line, line
    line = refused(secure.mtls, secure.mtls_flags(ca=secure.certs.other_ca))
    assert "could not verify the certificate of Kafka" in line and "kafka.ssl.ca.location" in line, line
