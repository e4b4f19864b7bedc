"""``hivewire dlq replay``: dead letters the runtime wrote (Apache Kafka) go back through their listener."""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import hivewire as hw
from hivewire.tools import _testing as testing
from hivewire.tools._cli import main
from hivewire.tools._tail import NoSuchTopic, tail

APP = """
import hivewire as hw

app = hw.App("dlq-demo", config={"hivewire.retry.max.attempts": "1", "endpoint.port": "0"})
broken = {"orders"}
handled = []


@app.on_create_table(name="sync")
def sync(event):
    if event.table_name in broken:
        raise RuntimeError(f"cannot sync {event.table_name}")
    handled.append(event.qualified_name)


@app.on_create_table(name="audit")
def audit(event):
    handled.append("audit " + event.qualified_name)
"""


def test_dead_letters_go_back_through_the_listener_that_gave_up(
    kafka: str, unique: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / f"{unique}_app.py").write_text(APP)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(f"{unique}_app")
    app: hw.App = module.app
    events = [testing.make_event(hw.CreateTableEvent, "sales", name) for name in ("orders", "people", "orders")]
    assert testing.produce(kafka, unique, events) == 3

    # the real runtime dead-letters what "sync" cannot handle
    source = hw.KafkaSource(kafka, unique, group_id=unique, consumer_config={"auto.offset.reset": "earliest"})
    runner = threading.Thread(target=app.run, args=(source,), kwargs={"handle_signals": False})
    runner.start()
    try:
        deadline = time.monotonic() + 120
        letters: list[object] = []
        while len(letters) < 2 and time.monotonic() < deadline:
            time.sleep(1)
            with contextlib.suppress(NoSuchTopic):  # until the first dead letter creates it
                letters = list(tail(kafka, f"{unique}.dlq", from_beginning=True, exit_at_end=True))
        assert len(letters) == 2
    finally:
        app.stop()
        runner.join(60)
    assert sorted(module.handled) == ["audit sales.orders", "audit sales.orders", "audit sales.people", "sales.people"]

    common = ["dlq", "replay", f"{unique}_app:app", "--bootstrap-servers", kafka, "--topic", unique]
    cli = CliRunner()
    dry = cli.invoke(main, [*common, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert [line.split()[0] for line in dry.stdout.splitlines()] == ["selected", "selected"]
    assert "-> sync: RuntimeError: cannot sync orders" in dry.stdout

    again = cli.invoke(main, common)  # still broken: reported with the listener's own traceback, exit 1
    assert again.exit_code == 1
    assert [line.split()[0] for line in again.stdout.splitlines()] == ["failed", "failed"]
    assert f"{unique}_app.py" in again.stderr and "cannot sync orders" in again.stderr

    module.broken.clear()
    module.handled.clear()
    later = cli.invoke(main, [*common, "--from-offset", "1000"])  # past every letter: nothing to do
    assert later.exit_code == 0 and later.stdout == "" and module.handled == []
    fixed = cli.invoke(main, [*common, "--listener", "sync"])
    assert fixed.exit_code == 0, fixed.output
    assert module.handled == ["sales.orders", "sales.orders"]  # only "sync": "audit" had them already
    assert "2 replayed, 0 failed" in fixed.stderr

    none = cli.invoke(main, [*common, "--listener", "audit"])
    assert none.exit_code == 0 and none.stdout == ""
    del sys.modules[f"{unique}_app"]


def test_no_dead_letter_topic_means_nothing_to_replay(kafka: str, unique: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    (tmp_path / f"{unique}_app.py").write_text(APP)
    monkeypatch.syspath_prepend(str(tmp_path))
    result = CliRunner().invoke(
        main, ["dlq", "replay", f"{unique}_app:app", "--bootstrap-servers", kafka, "--topic", unique]
    )
    assert result.exit_code == 0 and f"{unique}.dlq does not exist: nothing was dead-lettered" in result.stderr
