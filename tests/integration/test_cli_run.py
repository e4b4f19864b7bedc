"""Issue 33, ``hivewire run`` as a new user meets it: what is typed, and the first lines seen.

The edit-and-rerun loop (what a restart waits for, said while it waits; the group left on stop), errors that
point at the user's code (a failing listener, a broken module, a misspelt option, a wrong signature), ``run``
with no arguments, and Ctrl-C with a listener mid-call (what it waits for, a second Ctrl-C, the summary).
Each runs ``hivewire run`` in its own process against the session's Kafka (``kafka`` fixture).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from waiting import wait_for

import hivewire as hw
from hivewire.tools import _testing as testing
from hivewire.tools._cli import main
from hivewire.tools._local import free_port

LISTENERS = textwrap.dedent('''
    """One listener; what it does is chosen by the environment (a file per call: HW_OUT/calls.log)."""
    import os, time
    import hivewire as hw

    app = hw.App("day-one")
    OUT = os.environ["HW_OUT"]

    @app.on_create_table
    def created(event):
        with open(f"{OUT}/calls.log", "a") as f:
            f.write(f"{event.qualified_name}\\n")
        if os.environ.get("HW_SLOW"):
            while not os.path.exists(f"{OUT}/release"):
                time.sleep(0.05)
        if os.environ.get("HW_FAIL"):
            check_order(event)

    def check_order(event):
        raise ValueError(f"no order for {event.table_name}")
''')


class Run:
    """``hivewire run`` in a process of its own, its output (stdout and stderr) in a file; killed at the end of
    the test if it still runs (:func:`no_process_left`)."""

    started: list[Run] = []

    def __init__(self, workdir: Path, args: list[str], env: dict[str, str] | None = None) -> None:
        Run.started.append(self)
        self.log = workdir / f"run-{len(list(workdir.glob('run-*.log')))}.log"
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "hivewire", "run", *args],
                cwd=workdir,
                env={**os.environ, "HW_OUT": str(workdir), **(env or {})},
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def lines_after(self, marker: str) -> list[str]:
        lines = self.text().splitlines()
        index = next(i for i, line in enumerate(lines) if marker in line)
        return lines[index:]

    def wait_for_line(self, text: str, timeout: float = 120) -> None:
        wait_for(lambda: text in self.text() or self.proc.poll() is not None, f"{text!r} in the output", timeout)
        assert text in self.text(), self.text()

    def stop(self, sig: int = signal.SIGINT) -> None:
        self.proc.send_signal(sig)

    def wait(self) -> int:
        return self.proc.wait(120)


def health(port: int) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10) as response:
            body: dict[str, Any] = json.loads(response.read())
    except urllib.error.HTTPError as e:
        body = json.loads(e.read())
    return body


@pytest.fixture(autouse=True)
def no_process_left() -> Iterator[None]:
    yield
    while Run.started:
        run = Run.started.pop()
        if run.proc.poll() is None:
            run.proc.kill()
            run.proc.wait(30)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "listeners.py").write_text(LISTENERS)
    return tmp_path


def args(kafka: str, topic: str, group: str, port: int = 0, *extra: str) -> list[str]:
    return [
        "listeners:app",
        "--bootstrap-servers",
        kafka,
        "--topic",
        topic,
        "--group",
        group,
        "--from-beginning",
        "--endpoint-port",
        str(port),
        *extra,
    ]


def calls(workdir: Path) -> list[str]:
    path = workdir / "calls.log"
    return path.read_text().splitlines() if path.exists() else []


# -- 1: the edit-and-rerun loop ---------------------------------------------------------------------------


def test_a_restart_says_it_waits_for_its_partitions_and_a_stop_leaves_the_group(
    kafka: str, unique: str, workdir: Path
) -> None:
    # A member that stopped without leaving (kill -9) holds the group until its session times out (30 s here),
    # and the next start waits that long, saying so every ASSIGNMENT_REMINDER (10 s) while it waits: the
    # session is long enough for the first reminder even when the second process takes long to start.
    session = ["-X", "session.timeout.ms=30000", "-X", "heartbeat.interval.ms=1000"]
    testing.produce(kafka, unique, [testing.make_event(hw.CreateTableEvent, "sales", "orders")])
    first = Run(workdir, args(kafka, unique, unique, 0, *session))
    wait_for(lambda: calls(workdir), "the first run's event", 120)
    first.proc.kill()
    first.wait()

    port = free_port()
    second = Run(workdir, args(kafka, unique, unique, port, *session))
    second.wait_for_line("joining consumer group")
    joining = second.lines_after("joining consumer group")
    assert f"joining consumer group {unique}; waiting for partition assignment" in joining[0]
    wait_for(lambda: health(port).get("waiting_for_assignment_s"), "/health to say how long it has waited", 60)
    waiting = health(port)
    assert waiting["status"] == "DOWN" and waiting["assigned"] == [], waiting
    second.wait_for_line("waiting for partition assignment from the group coordinator (1")
    line = second.lines_after("waiting for partition assignment from the group coordinator (1")[0]
    assert f"group {unique}" in line and "session.timeout.ms (30000 ms)" in line, line
    second.wait_for_line("assigned [")
    wait_for(lambda: health(port).get("status") == "UP", "/health UP once assigned", 60)
    assert health(port)["waiting_for_assignment_s"] is None

    testing.produce(kafka, unique, [testing.make_event(hw.CreateTableEvent, "sales", "after")])
    wait_for(lambda: "sales.after" in calls(workdir), "the event after the restart", 60)
    second.stop()
    assert second.wait() == 0, second.text()
    assert f"left consumer group {unique}" in second.text()


# -- 2, 3, 4: errors that point at the user's code ----------------------------------------------------------


def test_a_failing_listener_shows_its_own_frames_not_hivewires(kafka: str, unique: str, workdir: Path) -> None:
    retries = ["--set", "hivewire.retry.max.attempts=2", "--set", "hivewire.retry.initial.delay.ms=10"]
    testing.produce(kafka, unique, [testing.make_event(hw.CreateTableEvent, "sales", "orders")])
    run = Run(workdir, args(kafka, unique, unique, 0, *retries), {"HW_FAIL": "1"})
    run.wait_for_line("dead-lettering")
    run.stop()
    assert run.wait() == 0, run.text()
    report = run.lines_after("gave up on")
    listeners = str(workdir / "listeners.py")
    assert "ValueError('no order for orders')" in report[0] and f"{listeners}:" in report[0], report[0]
    # Then the user's frames, innermost last, and the exception: nothing of hivewire, tenacity or the pool.
    assert report[1] == "Traceback (most recent call last):", report[:7]
    assert f'File "{listeners}", line' in report[2] and "in created" in report[2], report[:7]
    assert report[3].strip() == "check_order(event)", report[:7]
    assert "in check_order" in report[4] and "raise ValueError" in report[5], report[:7]
    assert report[6] == "ValueError: no order for orders", report[:7]
    text = run.text()
    for internal in ("tenacity", "concurrent/futures", "hivewire/runtime", "_lane.py", "threading.py"):
        assert internal not in text, f"{internal} shown at INFO:\n{text}"
    assert "1 handled" not in text and "created: 0 handled, 2 failed attempt(s), 1 dead-lettered" in text, text


@pytest.mark.parametrize(
    ("source", "first_line", "frames"),
    [
        (
            "import hivewire as hw\napp = hw.App('b')\n\n@app.on_create_table\ndef f(event)\n    pass\n",
            "Error: {module}:app: cannot import '{module}': SyntaxError at {path}:5",
            ['  File "{path}", line 5, in <module>', "    def f(event)", "SyntaxError: expected ':'"],
        ),
        (
            "import hivewire as hw\napp = hw.App('b')\n\n@app.on_create_table(tabel='orders')\n"
            "def f(event):\n    pass\n",
            "Error: {module}:app: cannot import '{module}': TypeError at {path}:4",
            [
                '  File "{path}", line 4, in <module>',
                "    @app.on_create_table(tabel='orders')",
                "TypeError: unknown listener option(s) ['tabel'] (did you mean 'table'?); the options are",
            ],
        ),
        (
            "import hivewire as hw\napp = hw.App('b')\n\n@app.on_create_table\ndef two(event, extra):\n    pass\n",
            "Error: {module}:app: cannot import '{module}': TypeError at {path}:4",
            [
                '  File "{path}", line 4, in <module>',
                "    @app.on_create_table",
                "TypeError: listener two(event, extra) at {path}:4 cannot be called with one event (missing a "
                "required argument: 'extra'): a listener takes (event)",
            ],
        ),
    ],
    ids=["syntax-error", "misspelt-option", "wrong-signature"],
)
def test_a_broken_listener_module_is_named_as_typed_with_its_own_line(
    tmp_path: Path, unique: str, monkeypatch: pytest.MonkeyPatch, source: str, first_line: str, frames: list[str]
) -> None:
    module = f"broken_{unique}"
    path = tmp_path / f"{module}.py"
    path.write_text(source)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["run", f"{module}:app", "--bootstrap-servers", "127.0.0.1:1"])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert lines[0] == first_line.format(module=module, path=path), result.output
    for line, expected in zip(lines[1:], frames, strict=True):
        assert line.startswith(expected.format(path=path)), result.output
    assert "apiary.listener.list" not in result.output and "importlib" not in result.output


def test_a_wrong_signature_is_refused_at_registration_naming_the_function() -> None:
    app = hw.App("signatures")

    def no_args() -> None: ...

    line = no_args.__code__.co_firstlineno
    with pytest.raises(TypeError, match=rf"listener .*no_args\(\) at {__file__}:{line} cannot be called with one"):
        app.add_listener(no_args)

    class Audit(hw.MetaStoreEventListener):
        def on_drop_table(self) -> None: ...  # type: ignore[override]

    with pytest.raises(TypeError, match=r"Audit.on_drop_table\(self\) at .* a listener takes \(self, event\)"):
        app.add_listener(Audit)
    assert app.listeners == []
    app.add_listener(lambda event: None, name="fine")  # (event), and defaults or *args, are accepted
    app.add_listener(lambda event, extra=1: None, name="with-default")
    assert [listener.name for listener in app.listeners] == ["fine", "with-default"]


def test_run_without_arguments_asks_for_module_app_first(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("APIARY_BOOTSTRAP_SERVERS", "APIARY_KAFKA_TOPIC_NAME", "APIARY_LISTENER_LIST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["run"])
    assert result.exit_code == 2, result.output
    error = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert error == [
        "Error: give MODULE:APP, e.g. `hivewire run listeners:app` (the App named app in listeners.py of the "
        "current directory), or listeners with --listener PKG.MODULE:NAME or apiary.listener.list"
    ], result.output


# -- 5: Ctrl-C with a listener mid-call -----------------------------------------------------------------


def test_ctrl_c_says_what_it_waits_for_and_a_second_one_stops_at_once(kafka: str, unique: str, workdir: Path) -> None:
    session = ["-X", "session.timeout.ms=6000", "-X", "heartbeat.interval.ms=1000"]
    testing.produce(kafka, unique, [testing.make_event(hw.CreateTableEvent, "sales", "orders")])
    run = Run(workdir, args(kafka, unique, unique, 0, *session), {"HW_SLOW": "1"})
    wait_for(lambda: calls(workdir) == ["sales.orders"], "the listener's call", 120)

    run.stop()
    run.wait_for_line("waiting for listener created to finish")
    first = run.lines_after("received SIGINT")
    assert first[0].endswith(
        "received SIGINT: finishing current events and stopping (Ctrl-C again stops at once; the events being "
        "handled are then delivered again on restart)"
    ), first
    assert "waiting for listener created to finish CREATE_TABLE sales.orders at " in first[1], first
    run.stop()
    assert run.wait() == 130, run.text()  # events left uncommitted: not a clean exit (issue 40)
    second = run.lines_after("received SIGINT again")
    assert second[0].endswith("received SIGINT again: stopping without waiting for the listeners' calls"), second
    assert "stopping now: created (CREATE_TABLE sales.orders at " in second[1], second
    assert "not committed and are delivered again on restart" in second[1], second
    summary = [line for line in second if "stopped;" in line]
    assert len(summary) == 1 and "created: 0 handled, 0 failed attempt(s), 0 dead-lettered" in summary[0], second
    assert not (workdir / "release").exists()

    # Delivered again: the next run gets the same event first.
    (workdir / "release").write_text("")
    again = Run(workdir, args(kafka, unique, unique, 0, *session), {"HW_SLOW": "1"})
    wait_for(lambda: calls(workdir) == ["sales.orders", "sales.orders"], "the event again", 120)
    again.stop()
    assert again.wait() == 0, again.text()
    assert "created: 1 handled" in again.text()


# -- issue 40: a wrong topic, configuration mistakes in one pass, a misspelt app, a second Ctrl-C ----------


def test_a_wrong_topic_fails_at_start_with_tails_message_and_health_names_it(kafka: str, workdir: Path) -> None:
    port = free_port()
    wrong = f"apairy-{os.getpid()}-{port}"  # never created: the test broker does not create topics on a read
    run = Run(workdir, [*args(kafka, wrong, wrong, port), "--set", "hivewire.startup.timeout.ms=15000"])
    run.wait_for_line("does not exist")
    message = f"topic {wrong} does not exist on {kafka}: check --topic"
    wait_for(lambda: health(port).get("waiting_reason"), "/health to say why it waits", 60)
    waiting = health(port)
    assert waiting["status"] == "DOWN" and waiting["waiting_reason"].startswith(message), waiting
    assert run.wait() == 1, run.text()
    text = run.text()
    assert text.splitlines()[-1] == f"Error: {message} (apiary.kafka.topic.name)", text
    assert "Subscribed topic not available" not in text and "session.timeout.ms" not in text, text
    assert f"WARNING hivewire.kafka: {message} (apiary.kafka.topic.name); waiting up to 15 s for it" in text, text


def test_a_misspelt_app_gets_a_did_you_mean(workdir: Path) -> None:
    run = Run(workdir, ["listeners:ap", "--bootstrap-servers", "127.0.0.1:1"])
    assert run.wait() == 1, run.text()
    assert "Error: listeners:ap: 'listeners' has no 'ap'; did you mean listeners:app?" in run.text(), run.text()


def test_run_reports_every_configuration_problem_at_once_naming_flags_only_for_flags(kafka: str, workdir: Path) -> None:
    path = workdir / "drone-fly.properties"
    path.write_text(
        "apiary.kafka.topic.nmae=apiary\n"
        "instance.nmae=sync\n"
        "hivewire.retry.max.attemps=3\n"
        "endpoint.port=abc\n"
        "hivewire.retry.multiplier=fast\n"
    )
    run = Run(workdir, ["listeners:app", "--config", str(path), "--bootstrap-servers", kafka])
    assert run.wait() == 2, run.text()
    error = run.text()[run.text().index("Error:") :].splitlines()
    assert error == [
        "Error: 5 problems in the settings: one a line",
        f"  {path}:1: apiary.kafka.topic.nmae: unknown setting; did you mean apiary.kafka.topic.name?",
        f"  {path}:2: instance.nmae: unknown setting; did you mean instance.name?",
        f"  {path}:3: hivewire.retry.max.attemps: unknown setting; did you mean hivewire.retry.max.attempts?",
        f"  {path}:4: endpoint.port: 'abc' is not a whole number",
        f"  {path}:5: hivewire.retry.multiplier: 'fast' is not a number",
    ], run.text()
    # The flag is named when the value came from it; a Hive key mistyped in --set is refused too.
    flags = Run(workdir, ["listeners:app", "--bootstrap-servers", kafka, "--endpoint-port", "abc",
                          "--set", "metastore.uris=thrift://hms:9083"])  # fmt: skip
    assert flags.wait() == 2, flags.text()
    error = flags.text()[flags.text().index("Error:") :].splitlines()
    assert error == [
        "Error: 2 problems in the settings: one a line",
        "  flag --set metastore.uris: unknown setting; did you mean metastore.thrift.uris?",
        "  flag --endpoint-port: 'abc' is not a whole number",
    ], flags.text()


def test_check_config_for_run_shows_what_run_reads_and_the_apps_name(workdir: Path) -> None:
    path = workdir / "drone-fly.properties"
    path.write_text("apiary.bootstrap.servers=kafka:9092\napiary.kafka.topic.name=apiary\n")

    def check(*extra: str) -> dict[str, tuple[str, str]]:
        done = subprocess.run(
            [sys.executable, "-m", "hivewire", "check-config", *extra, "--config", str(path), "--json"],
            cwd=workdir, env={**os.environ, "HW_OUT": str(workdir)}, capture_output=True, text=True, timeout=120,
            check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return {row["key"]: (row["value"], row["source"]) for row in json.loads(done.stdout)}

    run = check("run", "listeners:app")
    assert run["instance.name"] == ("day-one", "the app's name (listeners:app)"), run
    assert run["apiary.kafka.topic.name"] == ("apiary", f"file {path}"), run
    assert "hivewire.retry.max.attempts" in run and "metastore.zookeeper.namespace" in run, run
    others = [
        k for k in run if k.startswith(("hivewire.shim.", "hivewire.archive.", "hivewire.spark.", "hivewire.register."))
    ]
    assert not others, others
    bare = check("run")
    assert bare["instance.name"][0] == "drone-fly" and "app's name" in bare["instance.name"][1], bare
    everything = check()
    assert "hivewire.shim.listen.port" in everything and len(everything) > len(run), everything
