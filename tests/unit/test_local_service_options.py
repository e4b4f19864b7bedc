"""``HIVEWIRE_JVM_OPTIONS``: the options every service of hivewire.tools._local starts its JVM with, before the
service's own (so a service's own setting wins), split as a shell would."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hivewire.tools._local import JVM_OPTIONS_ENV, LocalService


class ArgsRecorder(LocalService):
    """A "JVM" that writes its arguments to a file, one per line, and exits."""

    name = "recorder"
    main_class = "Main"

    def _java(self) -> str:
        script = self.workdir / "java"
        script.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {self.workdir / 'args.txt'}\n")
        script.chmod(0o755)
        return str(script)

    def _jars(self) -> list[str]:
        return []


def launched_args(workdir: Path) -> list[str]:
    service = ArgsRecorder(workdir=workdir, jvm_options=("-Xmx768m",))
    service.launch()
    deadline = time.monotonic() + 30
    while service.running and time.monotonic() < deadline:
        time.sleep(0.05)
    service.stop()
    return (workdir / "args.txt").read_text().splitlines()


def test_the_options_come_before_the_services_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(JVM_OPTIONS_ENV, "-XX:TieredStopAtLevel=1  '-Dhivewire.note=two words'")
    args = launched_args(tmp_path)
    assert "-Dhivewire.note=two words" in args
    assert args.index("-XX:TieredStopAtLevel=1") < args.index("-Xmx768m") < args.index("Main")


def test_without_the_variable_only_the_services_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(JVM_OPTIONS_ENV, raising=False)
    args = launched_args(tmp_path)
    assert not any(a.startswith("-XX:TieredStopAtLevel") for a in args) and "-Xmx768m" in args
