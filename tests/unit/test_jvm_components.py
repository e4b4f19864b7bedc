"""The Java components' harness (hivewire.tools._jvm) and what `hivewire local` runs Kafka on without Maven."""

from __future__ import annotations

from pathlib import Path

import pytest

from hivewire.errors import HivewireError, PrerequisiteError
from hivewire.tools import _jvm
from hivewire.tools._stack import LocalStack


def test_every_component_pins_its_versions_in_the_poms_properties() -> None:
    assert {"kafka", "spark-kafka", "iceberg-spark"} <= set(_jvm.components())
    text = _jvm.POM.read_text()
    body = text.split("<profiles>", 1)[1]
    # every <version> in a profile is a property reference: the versions live in <properties> only
    versions = [chunk.split("</version>", 1)[0] for chunk in body.split("<version>")[1:]]
    assert versions and all(v.startswith("${") and v.endswith(".version}") for v in versions), versions
    assert _jvm.version("kafka").startswith("4.")


def test_a_warm_cache_answers_without_maven(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    jar = tmp_path / "some.jar"
    jar.write_bytes(b"PK")
    monkeypatch.setenv("HIVEWIRE_JVM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    monkeypatch.delenv("MAVEN_HOME", raising=False)
    monkeypatch.delenv("M2_HOME", raising=False)
    assert not _jvm.is_resolved("kafka") and not _jvm.can_resolve("kafka")
    with pytest.raises(PrerequisiteError, match="apt-get install maven"):
        _jvm.resolve("kafka")
    cache = _jvm._cache_file("kafka")
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(str(jar))
    assert _jvm.resolve("kafka") == [jar]  # no Maven on PATH: the cache alone answered
    jar.unlink()  # a cache naming a jar that is gone is not used
    assert not _jvm.is_resolved("kafka")


def test_an_unknown_component_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVEWIRE_JVM_CACHE", str(tmp_path))
    with pytest.raises(HivewireError, match="no Java component 'kafak'"):
        _jvm.resolve("kafak")


def test_without_maven_or_cache_local_runs_the_mock_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HIVEWIRE_JVM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    monkeypatch.delenv("MAVEN_HOME", raising=False)
    monkeypatch.delenv("M2_HOME", raising=False)
    stack = LocalStack(workdir=str(tmp_path / "stack"))
    assert stack._broker is None and "Maven is not installed" in stack.kafka_note
    assert "mock cluster" in stack.kafka_note and "apt-get install maven" in stack.kafka_note
    assert LocalStack(workdir=str(tmp_path / "s2"), kafka="mock").kafka_note == "as asked (kafka='mock')"
    with pytest.raises(HivewireError, match="'auto', 'broker' or 'mock'"):
        LocalStack(kafka="kraft")


def test_the_peers_are_the_profiles_that_name_the_peers_repository() -> None:
    assert set(_jvm.peers()) == {"dronefly", "dronefly-legacy", "apiary8-listener"}
    assert set(_jvm.peers()) <= set(_jvm.components())
    assert _jvm.version("dronefly") == "1.0.9" and _jvm.version("dronefly-legacy") == "1.0.8"


def test_a_peer_without_the_peers_repository_names_the_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVEWIRE_JVM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(_jvm.PEERS_ENV, str(tmp_path / "no-such-repository"))
    assert _jvm.peers_repository() is None
    if _jvm.find_maven() is None:
        pytest.fail("Maven (mvn) is needed for this test: make test installs it (dev/prereqs.sh --with-maven)")
    with pytest.raises(PrerequisiteError, match="HIVEWIRE_PEERS_M2"):
        _jvm.resolve("dronefly")
    monkeypatch.setenv(_jvm.PEERS_ENV, str(tmp_path))
    assert _jvm.peers_repository() == tmp_path.resolve()


FAKE_MAVEN = """#!/bin/sh
# Answers like Maven's dependency plugin: the classpath into -Dmdep.outputFile, after a second of "downloading".
for arg in "$@"; do case "$arg" in -Dmdep.outputFile=*) out="${arg#-Dmdep.outputFile=}";; esac; done
echo "start $$" >> "$LOG"
sleep 1
printf %s "$JAR" > "$out"
echo "end $$" >> "$LOG"
"""


def test_components_resolve_side_by_side(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fetching from Central waits on the network: ``make jvm`` runs several Mavens at once, one per component."""
    home = tmp_path / "maven"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "mvn").write_text(FAKE_MAVEN)
    (home / "bin" / "mvn").chmod(0o755)
    jar = tmp_path / "some.jar"
    jar.write_bytes(b"PK")
    log = tmp_path / "maven.log"
    monkeypatch.setenv("MAVEN_HOME", str(home))
    monkeypatch.setenv("HIVEWIRE_JVM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("LOG", str(log))
    monkeypatch.setenv("JAR", str(jar))
    wanted = ["kafka", "spark-kafka", "iceberg-spark"]
    assert _jvm.main(["resolve", *wanted]) == 0
    events = [line.split()[0] for line in log.read_text().splitlines()]
    assert events[: len(wanted)] == ["start"] * len(wanted), events  # all three ran before any ended
    assert all(_jvm.resolve(component) == [jar] for component in wanted)
