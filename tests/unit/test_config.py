"""Configuration: files, environment, overrides, Drone Fly's keys, and validation that names the key."""

from __future__ import annotations

from pathlib import Path

import pytest

import hivewire as hw
from hivewire.config._config import Config
from hivewire.config._kafka import JAVA_CONSUMER_RENAMED, JAVA_ONLY_CONSUMER_KEYS
from hivewire.runtime._settings import RuntimeSettings as Settings

DRONE_FLY_PROPERTIES = """\
# A Drone Fly properties file, as its README shows them
apiary.bootstrap.servers=broker1:9092,broker2:9092
apiary.kafka.topic.name=apiary-events
apiary.listener.list=my.listeners:Audit, other.mod.Sync
instance.name=glue-sync
endpoint.port=8099
apiary.messaging.consumer.security.protocol=SASL_SSL
apiary.messaging.consumer.sasl.mechanism=AWS_MSK_IAM
apiary.messaging.consumer.sasl.jaas.config=software.amazon.msk.auth.iam.IAMLoginModule required;
apiary.messaging.consumer.auto.offset.reset = earliest
"""


def test_drone_fly_properties_file(tmp_path: Path) -> None:
    path = tmp_path / "drone-fly.properties"
    path.write_text(DRONE_FLY_PROPERTIES)
    settings = Settings.from_config(Config.load(file=path, env={}))
    assert settings.bootstrap_servers == "broker1:9092,broker2:9092"
    assert settings.topic == "apiary-events"
    assert settings.listener_list == ("my.listeners:Audit", "other.mod.Sync")
    assert settings.instance_name == "glue-sync"
    assert settings.endpoint_port == 8099
    assert settings.consumer_config == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "AWS_MSK_IAM",
        "sasl.jaas.config": "software.amazon.msk.auth.iam.IAMLoginModule required;",
        "auto.offset.reset": "earliest",
    }
    assert settings.dead_letter_topic == "apiary-events.dlq"


JAVA_CONSUMER_PROPERTIES = """\
apiary.bootstrap.servers=broker1:9092
apiary.kafka.topic.name=apiary-events
apiary.messaging.consumer.key.deserializer=org.apache.kafka.common.serialization.StringDeserializer
apiary.messaging.consumer.value.deserializer=org.apache.kafka.common.serialization.StringDeserializer
apiary.messaging.consumer.interceptor.classes=io.confluent.monitoring.clients.interceptor.MonitoringConsumerInterceptor
apiary.messaging.consumer.sasl.client.callback.handler.class=software.amazon.msk.auth.iam.IAMClientCallbackHandler
apiary.messaging.consumer.max.poll.records=50
apiary.messaging.consumer.fetch.max.wait.ms=100
apiary.messaging.consumer.receive.buffer.bytes=-1
apiary.messaging.consumer.partition.assignment.strategy=org.apache.kafka.clients.consumer.CooperativeStickyAssignor
apiary.messaging.consumer.ssl.endpoint.identification.algorithm=
apiary.messaging.consumer.ssl.truststore.type=PEM
apiary.messaging.consumer.ssl.truststore.location=/etc/kafka/ca.pem
apiary.messaging.consumer.sasl.mechanism=SCRAM-SHA-512
apiary.messaging.consumer.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
    username="hive" password="s3 cr;et";
apiary.messaging.consumer.session.timeout.ms=30000
"""


def test_java_only_consumer_properties_are_translated_or_ignored_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "drone-fly.properties"
    path.write_text(JAVA_CONSUMER_PROPERTIES)
    settings = Settings.from_config(Config.load(file=path, env={}))
    assert settings.batch_size == 50  # max.poll.records: records per poll
    with caplog.at_level("WARNING"):
        source = hw.KafkaSource(settings.bootstrap_servers, settings.topic, consumer_config=settings.consumer_config)
    assert source.consumer_config == {
        "fetch.wait.max.ms": "100",
        "socket.receive.buffer.bytes": "0",
        "partition.assignment.strategy": "cooperative-sticky",
        "ssl.endpoint.identification.algorithm": "none",
        "ssl.ca.location": "/etc/kafka/ca.pem",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "hive",
        "sasl.password": "s3 cr;et",
        "session.timeout.ms": "30000",
    }
    (warning,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    for key in (
        "key.deserializer",
        "value.deserializer",
        "interceptor.classes",
        "sasl.client.callback.handler.class",
        "ssl.truststore.type",
    ):
        assert f"apiary.messaging.consumer.{key}" in warning
    # hivewire's own key wins over Drone Fly's.
    explicit = Config.load(file=path, env={}, overrides={"hivewire.consumer.batch.size": "7"})
    assert Settings.from_config(explicit).batch_size == 7


def test_the_java_key_tables_match_this_librdkafka() -> None:
    from confluent_kafka import Consumer, KafkaException

    def refusal(key: str, value: str) -> str:
        try:
            Consumer({"group.id": "check", key: value}).close()
            return ""
        except KafkaException as e:
            return str(e)

    for key in JAVA_ONLY_CONSUMER_KEYS - {"ssl.truststore.location"}:  # refused for a reason of its own
        assert "No such configuration property" in refusal(key, "1"), key
    for java, native in JAVA_CONSUMER_RENAMED.items():
        assert "No such configuration property" in refusal(java, "1"), java
        assert "No such configuration property" not in refusal(native, "1"), native


@pytest.mark.parametrize(
    ("setting", "value", "key"),
    [
        ("auto.offset.reset", "sometimes", "auto.offset.reset"),
        ("no.such.property", "1", "no.such.property"),
        ("sasl.jaas.config", "software.amazon.msk.auth.iam.IAMLoginModule required;", "sasl.jaas.config"),
        ("receive.buffer.bytes", "-7", "receive.buffer.bytes"),  # translated to socket.receive.buffer.bytes
        ("max.poll.records", "0", "max.poll.records"),
    ],
)
def test_consumer_values_librdkafka_refuses_stop_the_app_naming_the_key(setting: str, value: str, key: str) -> None:
    config = Config(
        {
            "apiary.bootstrap.servers": "127.0.0.1:1",
            "apiary.kafka.topic.name": "t",
            "apiary.messaging.consumer.security.protocol": "SASL_PLAINTEXT",
            "apiary.messaging.consumer.sasl.mechanism": "PLAIN",
            f"apiary.messaging.consumer.{setting}": value,
        }
    )
    with pytest.raises(hw.ConfigError) as exc:
        settings = Settings.from_config(config)
        source = hw.KafkaSource(settings.bootstrap_servers, settings.topic, consumer_config=settings.consumer_config)
        source.open(lambda partitions: None, lambda partitions: None)
        source.close()
    assert exc.value.key == f"apiary.messaging.consumer.{key}"


def test_toml_file_with_nested_tables(tmp_path: Path) -> None:
    path = tmp_path / "hivewire.toml"
    path.write_text(
        'instance.name = "t"\n[apiary]\nbootstrap.servers = "b:1"\nkafka.topic.name = "x"\n'
        "[hivewire.retry]\nmax.attempts = 7\n[hivewire.listener]\ntimeout.ms = 2500\n"
    )
    settings = Settings.from_config(Config.load(file=path, env={}))
    assert (settings.bootstrap_servers, settings.topic, settings.instance_name) == ("b:1", "x", "t")
    assert settings.retry_max_attempts == 7
    assert settings.listener_timeout == 2.5


def test_precedence_base_file_env_overrides(tmp_path: Path) -> None:
    path = tmp_path / "a.properties"
    path.write_text("instance.name=from-file\nendpoint.port=1\napiary.kafka.topic.name=file-topic\n")
    env = {"INSTANCE_NAME": "from-env", "ENDPOINT_PORT": "2", "HOME": "/root", "APIARY_BOOTSTRAP_SERVERS": "e:9"}
    config = Config.load(
        base={"instance.name": "from-app", "hivewire.retry.max.attempts": "9"},
        file=path,
        env=env,
        overrides={"endpoint.port": "3"},
    )
    assert config["instance.name"] == "from-env"
    assert config["endpoint.port"] == "3"
    assert config["apiary.kafka.topic.name"] == "file-topic"
    assert config["apiary.bootstrap.servers"] == "e:9"
    assert config["hivewire.retry.max.attempts"] == "9"
    assert "home" not in config  # only known prefixes are taken from the environment


def test_defaults() -> None:
    settings = Settings.from_config(Config({"apiary.bootstrap.servers": "b", "apiary.kafka.topic.name": "t"}))
    assert settings.instance_name == "drone-fly"
    assert settings.endpoint_port == 8008
    assert settings.retry_max_attempts == 5
    assert (settings.retry_initial_delay, settings.retry_multiplier, settings.retry_max_delay) == (1.0, 2.0, 60.0)


@pytest.mark.parametrize(
    ("values", "key", "fragment"),
    [
        ({}, "apiary.bootstrap.servers", "required"),
        ({"apiary.bootstrap.servers": "b"}, "apiary.kafka.topic.name", "required"),
        ({"endpoint.port": "http"}, "endpoint.port", "not a whole number"),
        ({"endpoint.port": "70000"}, "endpoint.port", "between 0 and 65535"),
        ({"hivewire.retry.max.attempts": "0"}, "hivewire.retry.max.attempts", "at least 1"),
        ({"hivewire.retry.multiplier": "fast"}, "hivewire.retry.multiplier", "not a number"),
        ({"hivewire.retry.max.attemps": "3"}, "hivewire.retry.max.attemps", "did you mean hivewire.retry.max.attempts"),
    ],
)
def test_invalid_configuration_names_the_key(values: dict[str, str], key: str, fragment: str) -> None:
    base = {"apiary.bootstrap.servers": "b", "apiary.kafka.topic.name": "t"}
    merged = values if key.startswith("apiary.") else {**base, **values}  # the apiary cases omit a key
    with pytest.raises(hw.ConfigError) as exc:
        Settings.from_config(Config(merged))
    assert exc.value.key == key
    assert fragment in str(exc.value)


def test_unreadable_files_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(hw.ConfigError, match="no such file"):
        Config.load(file=tmp_path / "missing.properties", env={})
    bad = tmp_path / "bad.toml"
    bad.write_text("this is = = not toml")
    with pytest.raises(hw.ConfigError, match="cannot read"):
        Config.load(file=bad, env={})


def test_secrets_are_masked_in_repr() -> None:
    config = Config({"apiary.messaging.consumer.sasl.jaas.config": "user=u password=p", "a": "b"})
    assert "password=p" not in repr(config)
    assert "'a': 'b'" in repr(config)


def test_defaults_bound_each_listener_backlog_by_events_and_bytes() -> None:
    settings = Settings.from_config(Config({"apiary.bootstrap.servers": "b", "apiary.kafka.topic.name": "t"}))
    assert settings.queue_size == 50_000
    assert settings.queue_bytes == 256 * 1024 * 1024
    assert settings.max_abandoned_threads == 8


def test_zookeeper_discovery_keys_are_known(tmp_path: Path) -> None:
    path = tmp_path / "zk.properties"
    path.write_text(
        "apiary.bootstrap.servers=b\napiary.kafka.topic.name=t\n"
        "hivewire.zookeeper.auth=digest:hive:secret\nhivewire.zookeeper.ssl.ca=/etc/zk/ca.pem\n"
        "hivewire.zookeeper.ssl.certfile=/etc/zk/c.pem\nhivewire.zookeeper.ssl.keyfile=/etc/zk/k.pem\n"
        "hivewire.zookeeper.ssl.keyfile.password=pw\nhivewire.zookeeper.ssl.verify=false\n"
    )
    config = Config.load(file=path, env={})
    Settings.from_config(config)  # no "unknown setting"
    assert config["hivewire.zookeeper.auth"] == "digest:hive:secret"


def test_unknown_keys_from_the_environment_are_ignored_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    # What Kubernetes injects for a Service named "hivewire" in the pod's namespace.
    env = {
        "HIVEWIRE_SERVICE_HOST": "10.0.0.7",
        "HIVEWIRE_SERVICE_PORT": "8008",
        "HIVEWIRE_PORT": "tcp://10.0.0.7:8008",
        "HIVEWIRE_RETRY_MAX_ATTEMPTS": "7",
    }
    config = Config.load(base={"apiary.bootstrap.servers": "b", "apiary.kafka.topic.name": "t"}, env=env)
    with caplog.at_level("INFO", logger="hivewire.config"):
        settings = Settings.from_config(config)
    assert settings.retry_max_attempts == 7  # known keys from the environment still count
    (message,) = [r.getMessage() for r in caplog.records if r.name == "hivewire.config"]
    assert "HIVEWIRE_PORT, HIVEWIRE_SERVICE_HOST, HIVEWIRE_SERVICE_PORT" in message
    # A known key from the environment is still validated.
    bad = Config.load(
        base={"apiary.bootstrap.servers": "b", "apiary.kafka.topic.name": "t"},
        env={"HIVEWIRE_RETRY_MAX_ATTEMPTS": "many"},
    )
    with pytest.raises(hw.ConfigError) as exc:
        Settings.from_config(bad)
    assert str(exc.value) == "hivewire.retry.max.attempts: 'many' is not a whole number"


@pytest.mark.parametrize("where", ["file", "flag", "app"])
def test_unknown_keys_from_files_flags_and_the_app_are_errors(tmp_path: Path, where: str) -> None:
    base = {"apiary.bootstrap.servers": "b", "apiary.kafka.topic.name": "t"}
    typo = {"hivewire.listener.queue.sise": "5"}
    path = tmp_path / "a.properties"
    path.write_text("hivewire.listener.queue.sise=5\n" if where == "file" else "")
    # A flag wins over the environment: the key is the flag's (so a typo) even if the environment has it too.
    config = Config.load(
        base={**base, **(typo if where == "app" else {})},
        file=path,
        env={"HIVEWIRE_LISTENER_QUEUE_SISE": "5"} if where == "flag" else {},
        overrides=typo if where == "flag" else None,
    )
    with pytest.raises(hw.ConfigError) as exc:
        Settings.from_config(config)
    assert exc.value.key == "hivewire.listener.queue.sise"
    assert "did you mean hivewire.listener.queue.size" in str(exc.value)


def test_the_tools_own_environment_variables_are_not_settings(caplog: pytest.LogCaptureFixture) -> None:
    # make exports HIVEWIRE_PEERS_M2 for the tests; the CLI's output must not gain a line about it.
    env = {
        "HIVEWIRE_PEERS_M2": "/peers/m2",
        "HIVEWIRE_JVM_CACHE": "/cache",
        "HIVEWIRE_JVM_OPTIONS": "-Xss4m",
        "HIVEWIRE_NATIVE": "0",
    }
    config = Config.load(base={"apiary.bootstrap.servers": "b", "apiary.kafka.topic.name": "t"}, env=env)
    with caplog.at_level("DEBUG", logger="hivewire.config"):
        Settings.from_config(config)
    assert [r.getMessage() for r in caplog.records if r.name == "hivewire.config"] == []
    assert config.env_keys == frozenset()


def test_merged_overrides_are_not_from_the_environment() -> None:
    config = Config.load(env={"HIVEWIRE_SERVICE_HOST": "h", "HIVEWIRE_OTHER": "x"})
    assert config.env_keys == {"hivewire.service.host", "hivewire.other"}
    assert config.merged({"hivewire.other": "flag"}).env_keys == {"hivewire.service.host"}
