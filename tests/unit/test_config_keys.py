"""One configuration system: keys declared once, one typed reader, sources with provenance, unknown keys, the
generated reference, and the commands reading their settings through it."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import hivewire as hw
import hivewire_shim
from hivewire.config import _keys as keys
from hivewire.config._config import Config, Provenance
from hivewire.config._key import Key, env_name
from hivewire.config._kinds import Choice, Duration, HostPorts, Invalid
from hivewire.config._reference import REGENERATE, render
from hivewire.data._archive import Archiver, ArchiveSettings
from hivewire.errors import HivewireError
from hivewire.metastore._client_options import ClientOptions
from hivewire.metastore._registration import Registration, RegistrationSettings
from hivewire.metastore._zookeeper import DiscoveryConfig
from hivewire.runtime._settings import RuntimeSettings
from hivewire.tools._cli import FLAGS, main
from hivewire_shim import Shim, ShimSettings

ROOT = Path(__file__).resolve().parents[2]
KAFKA = {"apiary.bootstrap.servers": "b:9092", "apiary.kafka.topic.name": "t"}


# -- the declarations and the reference ----------------------------------------------------------------------


def test_the_committed_reference_is_the_declarations() -> None:
    committed = (ROOT / "docs/configuration.md").read_text(encoding="utf-8")
    assert committed == render(), f"docs/configuration.md is out of date: run `{REGENERATE}` from the repository root"


def test_each_spelling_and_environment_variable_belongs_to_one_key() -> None:
    spellings = [s for key in keys.KEYS for s in key.spellings]
    assert len(spellings) == len(set(spellings))
    variables = [env_name(s) for s in spellings]
    assert len(variables) == len(set(variables))


@pytest.mark.parametrize("key", keys.KEYS, ids=lambda k: k.name)
def test_every_default_is_a_valid_value(key: keys.Key[object]) -> None:
    if key.default is not None:
        key.kind.parse(key.default)
    assert key.doc.endswith(".") and key.kind.describe()


def test_every_flag_sets_a_declared_key_and_its_help_is_the_declaration() -> None:
    declared = set(keys.KEYS)
    for command, flags in FLAGS.items():
        for flag in flags:
            assert (flag.key in declared) != (flag.prefix in keys.PREFIXES), (command, flag.option)
    help_text = CliRunner().invoke(main, ["shim", "--help"]).output
    assert "hivewire.shim.read.timeout" in help_text and "[default: 10]" in help_text
    assert "--config" in help_text and "--set KEY=VALUE" in help_text


# -- the reader ----------------------------------------------------------------------------------------------


def test_hives_times_and_the_keys_own_unit() -> None:
    millis = Duration("ms", positive=True)
    assert (millis.parse("1500"), millis.parse("15s"), millis.parse("2m"), millis.parse("120000ms")) == (
        1.5,
        15.0,
        120.0,
        120.0,
    )
    assert Duration("s").parse("0") == 0
    for bad in ("soon", "5 fortnights", "-1s"):
        with pytest.raises(Invalid):
            millis.parse(bad)
    with pytest.raises(Invalid, match="more than zero"):
        millis.parse("0s")


def test_choices_and_addresses() -> None:
    assert Choice(("RANDOM", "SEQUENTIAL")).parse("random") == "RANDOM"
    with pytest.raises(Invalid, match="RANDOM or SEQUENTIAL"):
        Choice(("RANDOM", "SEQUENTIAL")).parse("ROUND_ROBIN")
    assert HostPorts().parse(" b1:9092, [::1]:9093 ,SSL://b3:9094 ") == "b1:9092,[::1]:9093,SSL://b3:9094"
    for bad in ("b1:99999", "b 1:9092", ","):
        with pytest.raises(Invalid):
            HostPorts().parse(bad)
    with pytest.raises(Invalid):
        HostPorts(single=True).parse("a:1,b:2")


def test_errors_name_the_key_as_written_and_say_what_is_expected(tmp_path: Path) -> None:
    alias = Config({"metastore.thrift.uris": "zk1", "hive.zookeeper.session.timeout": "soon"})
    with pytest.raises(hw.ConfigError) as exc:
        DiscoveryConfig.from_conf(alias)
    assert exc.value.key == "hive.zookeeper.session.timeout" and "'15s' or '120000ms'" in str(exc.value)
    flag = Config.load(env={}, overrides={"endpoint.port": "http"}, flags={"endpoint.port": "--endpoint-port"})
    with pytest.raises(hw.ConfigError) as exc:
        flag.read(keys.ENDPOINT_PORT)
    assert str(exc.value) == "--endpoint-port: 'http' is not a whole number"
    with pytest.raises(hw.ConfigError, match=r"set apiary\.bootstrap\.servers .* APIARY_BOOTSTRAP_SERVERS"):
        Config().read(keys.BOOTSTRAP_SERVERS)
    with pytest.raises(hw.ConfigError, match=r"did you mean hivewire\.retry\.max\.attempts"):
        Config().read("hivewire.retry.max.attemps")


def test_a_later_source_wins_whatever_the_spelling_and_within_one_the_name_wins(tmp_path: Path) -> None:
    path = tmp_path / "hive.properties"
    path.write_text("metastore.zookeeper.namespace=from_file\nhive.zookeeper.namespace=alias_in_file\n")
    in_file = Config.load(file=path, env={})
    assert in_file.read(keys.ZK_NAMESPACE) == "from_file"
    flagged = Config.load(file=path, env={}, overrides={"hive.zookeeper.namespace": "from_flag"})
    assert flagged.read(keys.ZK_NAMESPACE) == "from_flag"
    assert flagged.provenance(keys.ZK_NAMESPACE) == Provenance("flag", "hive.zookeeper.namespace")
    env = Config.load(file=path, env={"HIVE_METASTORE_ZOOKEEPER_NAMESPACE": "from_env"})
    assert env.read(keys.ZK_NAMESPACE) == "from_env"


def test_provenance_of_every_source(tmp_path: Path) -> None:
    path = tmp_path / "a.properties"
    path.write_text("apiary.kafka.topic.name=file-topic\nhive.metastore.uris=thrift://h:9083\n")
    config = Config.load(
        base={"instance.name": "app"},
        file=path,
        env={"APIARY_BOOTSTRAP_SERVERS": "e:9", "HOME": "/root"},
        overrides={"endpoint.port": "0"},
        flags={"endpoint.port": "--endpoint-port"},
    )
    names = ["instance.name", "apiary.kafka.topic.name", "apiary.bootstrap.servers", "endpoint.port"]
    names += ["hivewire.retry.max.attempts", "metastore.thrift.uris"]
    shown = {key: str(config.provenance(key)) for key in names}
    assert shown == {
        "instance.name": "the app's settings",
        "apiary.kafka.topic.name": f"file {path}",
        "apiary.bootstrap.servers": "environment variable APIARY_BOOTSTRAP_SERVERS",
        "endpoint.port": "flag --endpoint-port",
        "hivewire.retry.max.attempts": "default",
        "metastore.thrift.uris": f"file {path} (hive.metastore.uris)",
    }
    effective = {e.key: (e.value, str(e.provenance)) for e in config.effective()}
    assert effective["hivewire.retry.max.attempts"] == ("5", "default")
    assert effective["endpoint.port"] == ("0", "flag --endpoint-port")
    secret = Config({"hivewire.zookeeper.auth": "digest:u:pw", "apiary.messaging.consumer.sasl.jaas.config": "x"})
    values = {e.key: e.value for e in secret.effective()}
    assert values["hivewire.zookeeper.auth"] == "***" and values["apiary.messaging.consumer.sasl.jaas.config"] == "***"


def test_yaml_and_json_files_are_refused_and_hadoop_xml_is_read(tmp_path: Path) -> None:
    for name in ("application.yml", "application.yaml", "settings.json"):
        path = tmp_path / name
        path.write_text("apiary:\n  bootstrap:\n    servers: b:9092\n")
        with pytest.raises(hw.ConfigError) as exc:
            Config.load(file=path, env={})
        assert ".properties, .toml and Hadoop .xml" in str(exc.value) and "apiary.bootstrap.servers=" in str(exc.value)
    site = tmp_path / "hive-site.xml"
    site.write_text("<configuration><property><name>hive.metastore.uris</name><value>thrift://h:1</value></property>"
                    "</configuration>")  # fmt: skip
    assert Config.load(file=site, env={}).read(keys.METASTORE_URIS) == "thrift://h:1"


# -- unknown keys --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("endpoint.prot", "endpoint.port"),
        ("instance.nmae", "instance.name"),
        ("apiary.kafka.topic", "apiary.kafka.topic.name"),
        ("hivewire.shim.spool.dri", "hivewire.shim.spool.dir"),
        ("hivewire.zookeeper.auht", "hivewire.zookeeper.auth"),
    ],
)
def test_unknown_keys_in_our_namespaces_fail_with_did_you_mean(typo: str, meant: str) -> None:
    with pytest.raises(hw.ConfigError) as exc:
        Config({**KAFKA, typo: "0"}).check_keys()
    assert exc.value.key == typo and f"did you mean {meant}?" in str(exc.value)


def test_pass_through_prefixes_and_other_programs_keys_are_not_checked() -> None:
    Config(
        {
            "apiary.messaging.consumer.whatever.librdkafka.says": "1",
            "hivewire.shim.producer.compression.type": "zstd",
            "hivewire.archive.storage.AWS_REGION": "eu-west-1",
            "hive.metastore.anything": "x",
            "audit.tag": "a listener's own setting",
        }
    ).check_keys()


def test_environment_typos_warn_and_kubernetes_service_variables_are_only_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    env = {
        "HIVEWIRE_SHIM_SERVICE_HOST": "10.0.0.7",  # a Service named hivewire-shim
        "HIVEWIRE_SHIM_PORT": "tcp://10.0.0.7:9083",
        "HIVEWIRE_SHIM_PORT_9083_TCP_PORT": "9083",
        "HIVEWIRE_RETRY_MAX_ATTEMPS": "3",  # a typo
    }
    config = Config.load(base=KAFKA, env=env)
    with caplog.at_level(logging.INFO, logger="hivewire.config"):
        RuntimeSettings.from_config(config)
    records = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "hivewire.config"]
    assert records[0][0] == "WARNING" and "HIVEWIRE_RETRY_MAX_ATTEMPS" in records[0][1]
    assert "did you mean HIVEWIRE_RETRY_MAX_ATTEMPTS (hivewire.retry.max.attempts)?" in records[0][1]
    assert records[1] == (
        "INFO",
        "ignoring environment variables that are not hivewire settings: HIVEWIRE_SHIM_PORT, "
        "HIVEWIRE_SHIM_PORT_9083_TCP_PORT, HIVEWIRE_SHIM_SERVICE_HOST",
    )
    assert len(records) == 2


# -- the settings of each consumer ---------------------------------------------------------------------------


def test_client_options_from_hive_keys_read_through_the_declarations() -> None:
    options = ClientOptions.from_config(Config({"hive.metastore.client.socket.timeout": "2m"}))
    assert options == ClientOptions(timeout=120.0)
    assert options.keywords() == {"timeout": 120.0}


def test_shim_settings_from_a_file_with_flags_winning(tmp_path: Path) -> None:
    path = tmp_path / "shim.toml"
    path.write_text(
        '[hivewire.shim]\nupstream.uris = "thrift://hms:9083"\nlisten.port = 9999\nread.timeout = "2500ms"\n'
        '[hivewire.shim.producer]\n"compression.type" = "zstd"\n'
        '[apiary]\n"bootstrap.servers" = "k:9092"\n"kafka.topic.name" = "apiary"\n'
    )
    settings = ShimSettings.from_config(
        Config.load(
            file=path,
            env={},
            overrides={"hivewire.shim.listen.port": "0", "hivewire.shim.spool.dir": str(tmp_path / "spool")},
        )
    )
    assert (settings.upstream, settings.options.port, settings.options.read_timeout, settings.options.host) == (
        "thrift://hms:9083",
        0,
        2.5,
        "0.0.0.0",
    )
    assert settings.publish is not None and settings.publish.producer_config == {"compression.type": "zstd"}
    assert (settings.publish.topic, settings.publish.fsync, settings.options.zookeeper) == ("apiary", "interval", None)
    assert (settings.options.intent_dir, settings.options.intent_fsync) == (str(tmp_path / "spool"), False)
    shim = Shim.from_settings(settings, sinks=[])
    try:
        assert (shim.port, shim.read_timeout, shim.max_message_bytes) == (0, 2.5, 100 * 1024 * 1024)
    finally:
        shim.lookup.close()


def test_the_shims_zookeeper_takes_the_configurations_credentials_and_tls(tmp_path: Path) -> None:
    # The shim registers with, and discovers through, the same client settings as `register` and `discover`:
    # hivewire.zookeeper.auth and the TLS keys from a file, the environment or --set, not only a hive-site.xml.
    values = {
        "hivewire.shim.upstream.uris": "thrift://hms:9083",
        "hivewire.shim.zookeeper": "zk1:2181",
        "hivewire.zookeeper.auth": "digest:shim:s3cret",
        "metastore.zookeeper.ssl.client.enable": "true",
        "metastore.zookeeper.session.timeout": "7s",
    }
    found = ShimSettings.from_config(Config(values)).options.zookeeper
    assert found is not None
    assert (found.quorum, found.namespace, found.use_ssl, found.session_timeout) == (
        "zk1:2181",
        "hive_metastore",
        True,
        7.0,
    )
    assert "s3cret" in str(found.auth_data) and "s3cret" not in repr(found)
    site = tmp_path / "hive-site.xml"
    site.write_text(
        "<configuration><property><name>hivewire.zookeeper.auth</name><value>digest:site:other</value></property>"
        "</configuration>"
    )
    values = {**values, "hivewire.shim.hive.site": str(site)}
    del values["hivewire.shim.zookeeper"]
    with_site = ShimSettings.from_config(Config({**values, "hivewire.shim.zookeeper": "zk2:2181"})).options.zookeeper
    assert with_site is not None and "s3cret" in str(with_site.auth_data) and "other" not in str(with_site.auth_data)


@pytest.mark.parametrize(
    ("values", "key", "fragment"),
    [
        ({}, "hivewire.shim.upstream.uris", "exactly one of"),
        ({"hivewire.shim.upstream.uris": "thrift://h:1", "apiary.kafka.topic.name": "t"}, "apiary.bootstrap.servers",
         "go together"),
        ({"hivewire.shim.upstream.uris": "thrift://h:1", "hivewire.shim.namespace": "ns"}, "hivewire.shim.namespace",
         "neither hivewire.shim.zookeeper nor hivewire.shim.hive.site"),
        ({"hivewire.shim.upstream.uris": "thrift://h:1", "hivewire.shim.spool.fsync": "sometimes"},
         "hivewire.shim.spool.fsync", "always, interval or never"),
    ],
)  # fmt: skip
def test_shim_settings_refuse_what_cannot_work(values: dict[str, str], key: str, fragment: str) -> None:
    with pytest.raises(hw.ConfigError) as exc:
        ShimSettings.from_config(Config(values))
    assert exc.value.key == key and fragment in str(exc.value)


def test_archive_and_register_settings(tmp_path: Path) -> None:
    archive = ArchiveSettings.from_config(
        Config(
            {
                **KAFKA,
                "hivewire.archive.table": str(tmp_path / "t"),
                "hivewire.archive.flush.interval": "1m",
                "apiary.messaging.consumer.session.timeout.ms": "3000",
                "hivewire.archive.storage.AWS_REGION": "eu-west-1",
            }
        )
    )
    assert (archive.flush_seconds, archive.flush_events, archive.app_id) == (60.0, 10_000, None)
    assert archive.consumer_config == {"session.timeout.ms": "3000"}
    assert archive.storage_options == {"AWS_REGION": "eu-west-1"}
    with pytest.raises(hw.ConfigError) as exc:
        ArchiveSettings.from_config(Config(KAFKA))
    assert exc.value.key == "hivewire.archive.table" and "required" in str(exc.value)

    register = RegistrationSettings.from_config(
        Config(
            {
                "hivewire.register.metastore": "hms1:9083",
                "hivewire.register.zookeeper": "zk1",
                "hivewire.register.acl": "world:anyone:r, digest:ops:pw:cdrwa",
                "hivewire.register.interval": "10s",
                "metastore.thrift.framed.transport.enabled": "true",
            }
        )
    )
    assert (register.zookeeper.quorum, register.zookeeper.namespace) == ("zk1:2181", "hive_metastore")
    assert (register.acl, register.interval, register.check_timeout, register.transport) == (
        ("world:anyone:r", "digest:ops:pw:cdrwa"),
        10.0,
        None,
        "framed",
    )
    with pytest.raises(hw.ConfigError) as bad_acl:
        RegistrationSettings.from_config(Config({"hivewire.register.zookeeper": "zk1", "hivewire.register.acl": "x"}))
    assert bad_acl.value.key == "hivewire.register.acl"
    with pytest.raises(hw.ConfigError) as no_zk:
        RegistrationSettings.from_config(Config({"hivewire.register.metastore": "hms1:9083"}))
    assert no_zk.value.key == "hivewire.register.zookeeper"


# -- the commands --------------------------------------------------------------------------------------------


def test_shim_takes_a_config_file_and_its_flags_win_over_it_and_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}

    class StartsNot:
        def __init__(self, target: Any, **kwargs: Any) -> None:
            seen.update(kwargs, target=target)

        def start(self) -> None:
            raise HivewireError("not started in this test")

    monkeypatch.setattr(hivewire_shim, "Shim", StartsNot)
    monkeypatch.setenv("HIVEWIRE_SHIM_READ_TIMEOUT", "7")
    monkeypatch.setenv("HIVEWIRE_SHIM_HIVE_VERSION", "3.1.3")
    path = tmp_path / "shim.properties"
    path.write_text("hivewire.shim.upstream.uris=thrift://hms:9083\nhivewire.shim.read.timeout=1\n"
                    "hivewire.shim.listen.port=1234\nhivewire.shim.hive.version=2.3.9\n")  # fmt: skip
    result = CliRunner().invoke(main, ["shim", "--config", str(path), "--read-timeout", "3", "--no-database-events"])
    assert result.exit_code == 1 and "not started in this test" in result.output
    options = seen["options"]
    assert (seen["target"], options.port, options.read_timeout) == ("thrift://hms:9083", 1234, 3.0)
    assert (options.hive_version, options.database_events) == ("3.1.3", False)  # the environment over the file


def test_every_shim_setting_has_a_flag_that_sets_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hivewire.tools._cli._shim import FLAGS

    flagged = {flag.name for flag in FLAGS}
    shim_keys = [key for key in vars(keys).values() if isinstance(key, Key) and key.name.startswith("hivewire.shim.")]
    assert shim_keys and [key.name for key in shim_keys if key.name not in flagged] == []

    seen: dict[str, Any] = {}

    class StartsNot:
        def __init__(self, target: Any, **kwargs: Any) -> None:
            seen.update(kwargs)

        def start(self) -> None:
            raise HivewireError("not started in this test")

    monkeypatch.setattr(hivewire_shim, "Shim", StartsNot)
    cert, key = tmp_path / "client.pem", tmp_path / "client.key"
    args = ["--upstream", "thrift://hms:9083", "--connect-timeout", "2", "--lookup-connections", "3"]
    args += ["--upstream-ssl", "--upstream-ssl-certfile", str(cert), "--upstream-ssl-keyfile", str(key)]
    result = CliRunner().invoke(main, ["shim", *args])
    # The client certificate is read when the TLS context is made: the error names its flag and file.
    assert result.exit_code == 2, result.output
    assert "--upstream-ssl-certfile (hivewire.shim.upstream.ssl.certfile): cannot load the shim's client " in (
        result.output
    )
    assert f"from {cert} and {key}: No such file or directory" in result.output, result.output
    assert "options" not in seen
    result = CliRunner().invoke(main, ["shim", "--upstream", "thrift://hms:9083", *args[2:6]])
    assert result.exit_code == 1 and "not started in this test" in result.output, result.output
    assert (seen["options"].connect_timeout, seen["options"].lookup_connections) == (2.0, 3)


def test_command_errors_name_the_flag_and_are_usage_errors(tmp_path: Path) -> None:
    typo = tmp_path / "typo.properties"
    typo.write_text("hivewire.shim.upstream.uris=thrift://hms:9083\nhivewire.shim.spool.dri=/tmp\n")
    result = CliRunner().invoke(main, ["shim", "--config", str(typo)])
    # a typo in a file: the key to write there; the flag only for a value that came from one (issue 40)
    assert result.exit_code == 2 and "did you mean hivewire.shim.spool.dir? (" in result.output, result.output
    assert "--spool-dir" not in result.output
    result = CliRunner().invoke(main, ["shim", "--upstream", "thrift://h:1", "--read-timeout", "soon"])
    assert result.exit_code == 2 and "--read-timeout: 'soon' is not a time" in result.output
    yaml = tmp_path / "archive.yaml"
    yaml.write_text("a: 1\n")
    result = CliRunner().invoke(main, ["archive", "--config", str(yaml)])
    assert result.exit_code == 2 and "is a YAML file" in result.output
    result = CliRunner().invoke(main, ["archive", "--bootstrap-servers", "b:1", "--topic", "t"])
    assert result.exit_code == 2 and "--table (hivewire.archive.table): is required" in result.output


def test_archive_and_register_read_a_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, object] = {}

    def refuse(settings: object) -> None:
        seen["settings"] = settings
        raise HivewireError("not started in this test")

    monkeypatch.setattr(Archiver, "from_settings", refuse)
    monkeypatch.setattr(Registration, "from_settings", refuse)
    path = tmp_path / "hivewire.properties"
    path.write_text(
        "apiary.bootstrap.servers=b:9092\napiary.kafka.topic.name=apiary\nhivewire.archive.table=/data/events\n"
        "hivewire.archive.flush.events=5\napiary.messaging.consumer.security.protocol=SSL\n"
        "hivewire.register.metastore=hms1:9083\nhivewire.register.zookeeper=zk1:2181\nhivewire.register.interval=1\n"
    )
    result = CliRunner().invoke(main, ["archive", "--config", str(path), "-X", "session.timeout.ms=3000"])
    assert result.exit_code == 1 and "not started in this test" in result.output
    archive = seen["settings"]
    assert isinstance(archive, ArchiveSettings) and archive.flush_events == 5
    assert archive.consumer_config == {"security.protocol": "SSL", "session.timeout.ms": "3000"}
    result = CliRunner().invoke(main, ["register", "--config", str(path), "--acl", "world:anyone:r", "--acl",
                                       "digest:ops:pw:cdrwa", "--interval", "2"])  # fmt: skip
    assert result.exit_code == 1, result.output
    register = seen["settings"]
    assert isinstance(register, RegistrationSettings) and register.interval == 2.0
    assert register.acl == ("world:anyone:r", "digest:ops:pw:cdrwa") and register.zookeeper.quorum == "zk1:2181"
