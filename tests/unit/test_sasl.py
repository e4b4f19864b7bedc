"""SASL settings towards the metastore: keys (Hive's names as aliases), the Kerberos principal (``_HOST``),
what is refused before connecting, and the password kept out of reprs and of the effective settings.

GSSAPI cannot be negotiated here (no KDC): these tests cover how its service and host are derived, which is
all hivewire adds to pure-sasl's GSSAPI. PLAIN and DIGEST-MD5 run against a real SASL metastore in
tests/integration/test_metastore_sasl.py."""

from __future__ import annotations

import importlib.util
import socket
from pathlib import Path

import pytest

from hivewire.config import Config
from hivewire.errors import ConfigError, PrerequisiteError
from hivewire.metastore import MetastoreClient, SaslAuth
from hivewire.metastore._client_options import hive_client_options
from hivewire.metastore._sasl import negotiate, server_principal
from hivewire_shim import ShimSettings


def test_the_principal_is_split_and_host_replaced_as_hadoop_does() -> None:
    assert server_principal("hive/_HOST@EXAMPLE.COM", "HMS1.Example.com") == ("hive", "hms1.example.com", "EXAMPLE.COM")
    assert server_principal("hive/fixed.example.com@EXAMPLE.COM", "other") == (
        "hive",
        "fixed.example.com",
        "EXAMPLE.COM",
    )
    assert server_principal("hive-metastore/_HOST@R", "0.0.0.0") == ("hive-metastore", socket.getfqdn().lower(), "R")
    for bad in ("hive@EXAMPLE.COM", "hive/_HOST", "/h@R", "hive/a/b@R", "hive/h@R@S", ""):
        with pytest.raises(ConfigError, match=r"metastore.kerberos.principal: .* is not a Kerberos service principal"):
            server_principal(bad, "h")


def test_gssapi_takes_service_and_host_from_the_principal_others_from_the_service_key() -> None:
    kerberos = SaslAuth("GSSAPI", principal="hive/_HOST@EXAMPLE.COM")
    assert kerberos.server("Metastore-2.example.com") == ("hive", "metastore-2.example.com")
    digest = SaslAuth("DIGEST-MD5", "u", "p", service="hms")
    assert digest.server("Metastore-2.example.com") == ("hms", "Metastore-2.example.com")


def test_hive_sasl_enabled_alone_means_kerberos() -> None:
    conf = {
        "hive.metastore.uris": "thrift://hms:9083",
        "hive.metastore.sasl.enabled": "true",
        "hive.metastore.kerberos.principal": "hive/_HOST@EXAMPLE.COM",
    }
    auth = SaslAuth.from_config(Config(conf))
    assert auth == SaslAuth("GSSAPI", principal="hive/_HOST@EXAMPLE.COM")
    assert hive_client_options(conf)["sasl"] == auth
    assert SaslAuth.from_config(Config({"hive.metastore.sasl.enabled": "false"})) is None
    assert SaslAuth.from_config(Config({})) is None
    assert "sasl" not in hive_client_options({"hive.metastore.uris": "thrift://hms:9083"})


def test_settings_that_cannot_work_are_refused_naming_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"metastore\.kerberos.principal: GSSAPI .* needs the metastore's principal"):
        SaslAuth.from_config(Config({"metastore.sasl.enabled": "true"}))
    with pytest.raises(ConfigError, match=r"hivewire\.metastore\.sasl\.password: SASL PLAIN needs a user name"):
        SaslAuth.from_config(
            Config({"hivewire.metastore.sasl.mechanism": "plain", "hivewire.metastore.sasl.username": "u"})
        )
    with pytest.raises(ConfigError, match=r"hive\.metastore\.sasl\.enabled: is false while"):
        SaslAuth.from_config(
            Config({"hivewire.metastore.sasl.mechanism": "PLAIN", "hive.metastore.sasl.enabled": "false"})
        )
    with pytest.raises(ConfigError, match=r"sasl\.mechanism: .* must be PLAIN, DIGEST-MD5 or GSSAPI"):
        SaslAuth.from_config(Config({"hivewire.metastore.sasl.mechanism": "CRAM-MD5"}))
    with pytest.raises(ConfigError, match="is not one of PLAIN, DIGEST-MD5, GSSAPI"):
        SaslAuth("SCRAM", "u", "p")


def test_the_password_comes_from_a_file_or_the_environment_and_is_never_shown(tmp_path: Path) -> None:
    (tmp_path / "pw").write_text("from-a-file\n")
    base = {"hivewire.metastore.sasl.mechanism": "DIGEST-MD5", "hivewire.metastore.sasl.username": "u"}
    from_file = Config({**base, "hivewire.metastore.sasl.password": f"file:{tmp_path / 'pw'}"})
    assert SaslAuth.from_config(from_file) == SaslAuth("DIGEST-MD5", "u", "from-a-file")
    from_env = Config.load(env={"HIVEWIRE_METASTORE_SASL_PASSWORD": "from-env"}, overrides=base)
    auth = SaslAuth.from_config(from_env)
    assert auth is not None and auth.password == "from-env"
    assert "from-env" not in repr(auth) and "from-env" not in auth.describe()
    shown = {e.key: e.value for e in from_env.effective()}
    assert shown["hivewire.metastore.sasl.password"] == "***"
    client = MetastoreClient("thrift://hms:9083", sasl=auth)
    assert "from-env" not in repr(client.sasl)


def test_the_shim_reads_the_same_keys_and_its_flags_set_them() -> None:
    from hivewire.tools._cli._shim import FLAGS

    settings = ShimSettings.from_config(
        Config(
            {
                "hivewire.shim.upstream.uris": "thrift://hms:9083",
                "hivewire.metastore.sasl.mechanism": "PLAIN",
                "hivewire.metastore.sasl.username": "u",
                "hivewire.metastore.sasl.password": "p",
            }
        )
    )
    assert settings.options.upstream_sasl == SaslAuth("PLAIN", "u", "p")

    by_option = {flag.option: flag.name for flag in FLAGS}
    assert by_option["--upstream-sasl-mechanism"] == "hivewire.metastore.sasl.mechanism"
    assert by_option["--upstream-sasl-password"] == "hivewire.metastore.sasl.password"
    assert by_option["--upstream-kerberos-principal"] == "metastore.kerberos.principal"


def test_gssapi_without_the_kerberos_package_says_what_to_install() -> None:
    assert importlib.util.find_spec("kerberos") is None, "this test is about an environment without pykerberos"
    ours, theirs = socket.socketpair()
    try:
        with pytest.raises(PrerequisiteError, match="pip install kerberos"):
            negotiate(ours, "hms", SaslAuth("GSSAPI", principal="hive/_HOST@R"), uri="thrift://hms:9083", timeout=1)
    finally:
        ours.close()
        theirs.close()
