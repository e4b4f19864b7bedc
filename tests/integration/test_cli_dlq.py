"""``hivewire dlq replay``: dead letters the runtime wrote (Apache Kafka) go back through their listener."""

from __future__ import annotations

import contextlib
import importlib
import json
import subprocess
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


APP_33 = """
import hivewire as hw

app = hw.App("dlq-33", config={"hivewire.retry.max.attempts": "1", "endpoint.port": "0"})
broken = {"orders"}
handled = []


@app.on(hw.EventType.CREATE_TABLE, hw.EventType.ALTER_TABLE, hw.EventType.DROP_TABLE, name="sync")
def sync(event):
    if event.table_name in broken:
        raise RuntimeError(f"cannot sync {event.table_name}")
    handled.append(f"{event.event_type.value} {event.qualified_name}")
"""


def test_dead_letters_show_their_headers_keep_table_order_and_replays_are_recorded(
    kafka: str, unique: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33, item 7 (and tail's end of topic, item 9): as a user works with dead letters, kcat beside."""
    (tmp_path / f"{unique}_app33.py").write_text(APP_33)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(f"{unique}_app33")
    app: hw.App = module.app
    events = [
        testing.make_event(hw.CreateTableEvent, "sales", "orders"),
        testing.make_event(hw.CreateTableEvent, "sales", "people"),
        testing.make_event(hw.AlterTableEvent, "sales", "orders"),
        testing.make_event(hw.DropTableEvent, "sales", "orders"),
    ]
    assert testing.produce(kafka, unique, events) == 4
    dlq = f"{unique}.dlq"
    source = hw.KafkaSource(kafka, unique, group_id=unique, consumer_config={"auto.offset.reset": "earliest"})
    runner = threading.Thread(target=app.run, args=(source,), kwargs={"handle_signals": False})
    runner.start()
    try:
        deadline = time.monotonic() + 120
        letters: list[object] = []
        while len(letters) < 3 and time.monotonic() < deadline:
            time.sleep(1)
            with contextlib.suppress(NoSuchTopic):
                letters = list(tail(kafka, dlq, from_beginning=True, exit_at_end=True))
        assert len(letters) == 3
    finally:
        app.stop()
        runner.join(60)
    cli = CliRunner()

    # tail shows who gave up, how often and why; --json every header; it says when it reached the end.
    text = cli.invoke(main, ["tail", "--bootstrap-servers", kafka, "--topic", dlq, "--from-beginning", "-e"])
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert [line.split()[2] for line in lines] == ["CREATE_TABLE", "ALTER_TABLE", "DROP_TABLE"], lines
    assert all(line.endswith("[listener=sync attempts=1 error=RuntimeError: cannot sync orders]") for line in lines)
    # One table's letters share a partition (keyed by table), in their source order.
    assert len({line.split()[1].rsplit("@", 1)[0] for line in lines}) == 1, lines
    assert f"reached the end of {dlq} (" in text.stderr and "stopping (-e)" in text.stderr
    as_json = cli.invoke(
        main, ["tail", "--bootstrap-servers", kafka, "--topic", dlq, "--from-beginning", "-e", "--json"]
    )
    first = json.loads(as_json.stdout.splitlines()[0])
    assert first["message"]["eventType"] == "ON_CREATE_TABLE" and first["message"]["table"]["tableName"] == "orders"
    assert first["headers"]["hivewire.listener"] == "sync" and first["headers"]["hivewire.attempts"] == "1"
    assert first["headers"]["hivewire.source.table"] == "sales.orders"
    assert first["headers"]["hivewire.error"] == "RuntimeError: cannot sync orders"

    # Selection by the source record's partition and offset: the DROP only.
    drop = next(json.loads(line) for line in as_json.stdout.splitlines() if "DROP_TABLE" in line)
    where = f"{drop['headers']['hivewire.source.partition']}@{drop['headers']['hivewire.source.offset']}"
    common = ["dlq", "replay", f"{unique}_app33:app", "--bootstrap-servers", kafka, "--topic", unique]
    only_drop = cli.invoke(main, [*common, "--dry-run", "--source", where])
    assert [line.split()[2] for line in only_drop.stdout.splitlines()] == ["DROP_TABLE"], only_drop.output

    module.broken.clear()
    module.handled.clear()
    fixed = cli.invoke(main, common)
    assert fixed.exit_code == 0, fixed.output
    assert module.handled == ["CREATE_TABLE sales.orders", "ALTER_TABLE sales.orders", "DROP_TABLE sales.orders"]
    assert f"3 replayed, 0 failed; recorded in {dlq}.replays" in fixed.stderr

    # A second run repeats nothing, and says when each was replayed; --again replays them again.
    second = cli.invoke(main, [*common, "--dry-run"])
    assert second.exit_code == 0, second.output
    assert [line.split()[0] for line in second.stdout.splitlines()] == ["skipped"] * 3, second.output
    assert all("replayed at 20" in line and "(--again replays it again)" in line for line in second.stdout.splitlines())
    again = cli.invoke(main, [*common, "--dry-run", "--again"])
    assert [line.split()[0] for line in again.stdout.splitlines()] == ["selected"] * 3, again.output

    # The record is a topic of its own, readable with tail: which letter, when, with what result.
    record = cli.invoke(main, ["tail", "--bootstrap-servers", kafka, "--topic", f"{dlq}.replays", "--from-beginning",
                               "-e", "--json"])  # fmt: skip
    replays = [json.loads(line)["headers"] for line in record.stdout.splitlines()]
    assert [r["hivewire.replay.result"] for r in replays] == ["replayed"] * 3
    assert sorted(r["hivewire.replay.letter"] for r in replays) == sorted(line.split()[1] for line in lines)

    # Issue 40, item 7, as typed: the record's lines show the result, not the error the replay put right; a
    # replay run says once that it reached the end; a filter that matches nothing says so.
    shown = hivewire(
        tmp_path, "tail", "--bootstrap-servers", kafka, "--topic", f"{dlq}.replays", "--from-beginning", "-e"
    )
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == 3, shown.stdout
    for line in shown.stdout.splitlines():
        assert "  [listener=sync result=replayed at=20" in line and "error=" not in line, line
    nothing = hivewire(tmp_path, *common, "--listener", "nobody", "--type", "DROP_TABLE")
    assert nothing.returncode == 0, nothing.stderr
    assert nothing.stdout == "", nothing.stdout
    said = nothing.stderr.splitlines()
    assert f"no dead letter matched --listener nobody --type DROP_TABLE in {dlq}" in said, nothing.stderr
    assert f"{dlq}: 0 replayed, 0 failed" in said, nothing.stderr
    assert sum("reached the end" in line for line in said) == 1, nothing.stderr
    assert f"reached the end of {dlq} (" in nothing.stderr, nothing.stderr
    del sys.modules[f"{unique}_app33"]


def hivewire(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``hivewire ARGS`` as a user types it, in ``cwd`` (where the app's module is)."""
    return subprocess.run(
        [sys.executable, "-m", "hivewire", *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )
