"""SASL towards the metastore, against the real metastore handler behind Thrift's SASL server transport
(``sasl_metastore``: tests/java/hivewire/test/SaslMetastore.java): hivewire's MetastoreClient and the shim
(clients -> shim -> SASL metastore) with PLAIN and DIGEST-MD5, refusals that say what to check, and no
password in a DEBUG log. GSSAPI needs a KDC, which the tests do not have: tests/unit/test_sasl.py checks its
settings only."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from fidelity import Captured
from sasl_metastore import PASSWORD, USER, SaslMetastore
from waiting import wait_for

import hivewire as hw
from hivewire.config import Config
from hivewire.errors import MetastoreAuthError
from hivewire.events._model import EventType
from hivewire.metastore import SaslAuth
from hivewire.metastore._discovery import discover_metastores
from hivewire.metastore._registration import Registration, RegistrationSettings
from hivewire.metastore._sasl import Mechanism
from hivewire.tools._local import LocalMetastore, LocalZooKeeper, free_port
from hivewire.tools._testing import make_database, make_table
from hivewire_shim import Shim

MECHANISMS: list[Mechanism] = ["PLAIN", "DIGEST-MD5"]


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_client_configured_as_hive_is_works_with_each_mechanism(
    sasl_metastore: SaslMetastore, mechanism: Mechanism, unique: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "password").write_text(PASSWORD + "\n")
    monkeypatch.setenv("HW_TEST_SASL_PASSWORD", PASSWORD)
    password = f"file:{tmp_path / 'password'}" if mechanism == "PLAIN" else "env:HW_TEST_SASL_PASSWORD"
    conf = {
        "hive.metastore.uris": sasl_metastore.uri,
        "hive.metastore.sasl.enabled": "true",
        "hivewire.metastore.sasl.mechanism": mechanism,
        "hivewire.metastore.sasl.username": USER,
        "hivewire.metastore.sasl.password": password,
    }
    with hw.MetastoreClient.from_hive_conf(conf) as client:
        assert client.sasl == SaslAuth(mechanism, USER, PASSWORD)
        client.create_database(make_database(unique))
        client.create_table(make_table(unique, "t"))
        assert client.get_table(unique, "t").tableName == "t"
        client.drop_database(unique, True, True)
        assert unique not in client.get_all_databases()


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_wrong_password_fails_with_a_clear_error(sasl_metastore: SaslMetastore, mechanism: Mechanism) -> None:
    wrong = SaslAuth(mechanism, USER, "not-" + PASSWORD)
    with pytest.raises(MetastoreAuthError) as caught, hw.MetastoreClient(sasl_metastore.uri, sasl=wrong) as client:
        client.get_all_databases()
    message = str(caught.value)
    assert f"refused SASL {mechanism} as user {USER!r}" in message
    assert "check the user name and password" in message
    assert PASSWORD not in message and "not-" not in message
    assert caught.value.__cause__ is None and caught.value.__context__ is None  # no traceback soup


def test_a_mechanism_the_metastore_does_not_offer_is_named(sasl_metastore: SaslMetastore) -> None:
    client = hw.MetastoreClient(sasl_metastore.digest_only_uri, sasl=SaslAuth("PLAIN", USER, PASSWORD))
    with pytest.raises(MetastoreAuthError, match="that the metastore offers PLAIN"):
        client.open()
    # The same server takes DIGEST-MD5.
    with hw.MetastoreClient(sasl_metastore.digest_only_uri, sasl=SaslAuth("DIGEST-MD5", USER, PASSWORD)) as digest:
        assert "default" in digest.get_all_databases()


def test_sasl_towards_a_metastore_without_it_fails_instead_of_hanging(metastore: LocalMetastore) -> None:
    # A metastore without SASL reads the SASL start message as the beginning of a call and waits for the
    # rest: the negotiation's timeout (connect_timeout) ends it.
    client = hw.MetastoreClient(metastore.uri, connect_timeout=3, sasl=SaslAuth("PLAIN", USER, PASSWORD))
    with pytest.raises(MetastoreAuthError, match=r"hive\.metastore\.sasl\.enabled=true"):
        client.open()


def test_a_client_without_sasl_is_told_the_metastore_may_want_it(sasl_metastore: SaslMetastore) -> None:
    client = hw.MetastoreClient(sasl_metastore.uri, timeout=30)
    with pytest.raises(hw.MetastoreConnectionError, match=r"uses SASL \(hive\.metastore\.sasl\.enabled=true\)"):
        client.get_all_databases()


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_clients_reach_a_sasl_metastore_through_the_shim(
    sasl_metastore: SaslMetastore, mechanism: Mechanism, unique: str
) -> None:
    captured = Captured()
    auth = SaslAuth(mechanism, USER, PASSWORD)
    with (
        Shim(sasl_metastore.uri, host="127.0.0.1", sinks=[captured], upstream_sasl=auth) as shim,
        hw.MetastoreClient(shim.uri, timeout=60) as client,  # the client itself speaks plain Thrift to the shim
    ):
        client.create_database(make_database(unique))
        client.create_table(make_table(unique, "t"))
        table = client.get_table(unique, "t")
        table.parameters = {**(table.parameters or {}), "k": "v"}
        client.raw.alter_table(unique, "t", table)  # the shim reads the old table first, over SASL too
        client.drop_database(unique, True, True)
    kinds = [e.event_type for e in captured.events]
    assert kinds == [
        EventType.CREATE_DATABASE,
        EventType.CREATE_TABLE,
        EventType.ALTER_TABLE,
        EventType.DROP_TABLE,
        EventType.DROP_DATABASE,
    ]
    altered = captured.events[2]
    assert altered.old_table.parameters.get("k") is None and altered.new_table.parameters["k"] == "v"


def test_a_shim_with_a_wrong_password_tells_its_clients_why(sasl_metastore: SaslMetastore) -> None:
    wrong = SaslAuth("DIGEST-MD5", USER, "not-" + PASSWORD)
    with (
        Shim(sasl_metastore.uri, host="127.0.0.1", upstream_sasl=wrong) as shim,
        hw.MetastoreClient(shim.uri, timeout=60) as client,
    ):
        with pytest.raises(hw.MetastoreError, match="refused SASL DIGEST-MD5") as caught:
            client.get_all_databases()
        assert PASSWORD not in str(caught.value)


def _shim_process(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "hivewire", "--log-level", "DEBUG", "shim", "--bind", "127.0.0.1", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **env},
            cwd=log.parent,
        )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_debug_logs_of_a_sasl_shim_hold_no_password(
    sasl_metastore: SaslMetastore, kafka: str, unique: str, tmp_path: Path
) -> None:
    (tmp_path / "wrong-password").write_text("not-" + PASSWORD)
    ports = {"good": free_port(), "bad": free_port()}
    logs = {name: tmp_path / f"{name}.log" for name in ports}
    common = ["--upstream", sasl_metastore.uri, "--upstream-sasl-mechanism", "DIGEST-MD5"]
    common += ["--upstream-sasl-username", USER, "--bootstrap-servers", kafka, "--topic", f"sasl-{unique}"]
    good_password = ["--upstream-sasl-password", "env:HW_TEST_SASL_PASSWORD"]
    bad_password = ["--upstream-sasl-password", f"file:{tmp_path / 'wrong-password'}"]
    good = _shim_process(
        [*common, "--port", str(ports["good"]), "--spool-dir", str(tmp_path / "spool-good"), *good_password],
        logs["good"],
        {"HW_TEST_SASL_PASSWORD": PASSWORD},
    )
    bad = _shim_process(
        [*common, "--port", str(ports["bad"]), "--spool-dir", str(tmp_path / "spool-bad"), *bad_password],
        logs["bad"],
        {},
    )
    try:
        for name, proc in (("good", good), ("bad", bad)):
            log = logs[name]
            wait_for(lambda p=proc, f=log: p.poll() is not None or "serving on" in f.read_text(), f"{name} shim", 120)
            assert proc.poll() is None, log.read_text()
        with hw.MetastoreClient(f"thrift://127.0.0.1:{ports['good']}", timeout=60) as client:
            client.create_database(make_database(unique))
            client.drop_database(unique, True, True)
        refused = hw.MetastoreClient(f"thrift://127.0.0.1:{ports['bad']}", timeout=60)
        with pytest.raises(hw.MetastoreError, match="refused SASL DIGEST-MD5"):
            refused.get_all_databases()
        refused.close()
    finally:
        _stop(good)
        _stop(bad)
    text = {name: log.read_text() for name, log in logs.items()}
    assert "DEBUG" in text["good"] and "DEBUG" in text["bad"]  # the level the grep is about
    assert "refused SASL DIGEST-MD5" in text["bad"]  # the operator sees why
    for name, body in text.items():
        assert PASSWORD not in body, f"the {name} shim's DEBUG log holds the password"


def test_the_register_sidecar_checks_a_sasl_metastore_with_its_credentials(
    sasl_metastore: SaslMetastore, zookeeper: LocalZooKeeper, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HW_TEST_SASL_PASSWORD", PASSWORD)
    base = {
        "hivewire.register.metastore": sasl_metastore.uri,
        "hivewire.register.zookeeper": zookeeper.quorum,
        "hivewire.register.interval": "1s",
    }
    sasl = {
        "hive.metastore.sasl.enabled": "true",
        "hivewire.metastore.sasl.mechanism": "DIGEST-MD5",
        "hivewire.metastore.sasl.username": USER,
        "hivewire.metastore.sasl.password": "env:HW_TEST_SASL_PASSWORD",
    }
    # Without credentials its health checks fail, and it never registers the metastore.
    without = {**base, "hivewire.register.namespace": f"{unique}_plain"}
    with Registration.from_config(Config(without)) as plain:
        wait_for(lambda: plain.checks >= 3, "three health checks", timeout=120)
        assert plain.healthy is False and plain.node is None
    # With them, it does.
    settings = RegistrationSettings.from_config(Config({**base, **sasl, "hivewire.register.namespace": unique}))
    assert settings.sasl == SaslAuth("DIGEST-MD5", USER, PASSWORD) and PASSWORD not in repr(settings)
    with Registration.from_settings(settings) as registered:
        wait_for(lambda: registered.node, "the SASL metastore to be registered", timeout=120)
        assert registered.healthy is True
        [found] = discover_metastores(zookeeper.quorum, unique)
        with hw.MetastoreClient(found, sasl=settings.sasl) as client:
            assert "default" in client.get_all_databases()


def test_spark_sessions_do_not_ask_a_sasl_metastore_its_release(sasl_metastore: SaslMetastore) -> None:
    """hivewire.spark.session asks the metastore its release over a plain connection, to refuse Spark's Hive 2.3
    client on Hive 4; a SASL metastore refuses that connection, and then Spark's own client is left to it."""
    from hivewire.data._spark import _metastore_release

    assert _metastore_release([sasl_metastore.uri]) is None
