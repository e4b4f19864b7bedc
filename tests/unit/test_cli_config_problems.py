"""Issue 33, item 8: every problem of a configuration file in one run, each with its file:line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from hivewire.config._config import Config
from hivewire.config._files import key_lines
from hivewire.tools._cli import main

PROPERTIES = """\
# Drone Fly's keys, with two typos and a bad value
apiary.bootstrap.servers=kafka:9092
apiary.kafka.topic.nmae=apiary
instance.name = orders \\
    -sync
hivewire.retry.max.attemps: 3
endpoint.port=abc
"""


def test_check_config_reports_every_problem_with_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "drone-fly.properties"
    path.write_text(PROPERTIES)
    result = CliRunner().invoke(main, ["check-config", "--config", str(path)], env={})
    assert result.exit_code == 2, result.output
    error = result.output[result.output.index("Error:") :].splitlines()
    assert error == [
        "Error: 3 problems in the settings: one a line",
        # In a file the key is what to write, not a flag (issue 40)
        f"  {path}:3: apiary.kafka.topic.nmae: unknown setting; did you mean apiary.kafka.topic.name?",
        f"  {path}:6: hivewire.retry.max.attemps: unknown setting; did you mean hivewire.retry.max.attempts?",
        f"  {path}:7: endpoint.port: 'abc' is not a whole number",
    ]


@pytest.mark.parametrize("command", ["run", "tail", "archive", "shim"])
def test_every_command_lists_every_unknown_key_with_its_line(tmp_path: Path, command: str) -> None:
    path = tmp_path / "app.toml"
    path.write_text('[apiary.kafka]\ntopic.nmae = "apiary"\n\n[hivewire]\nretry.max.attemps = 3\n')
    result = CliRunner().invoke(main, [command, "--config", str(path)], env={})
    assert result.exit_code == 2, result.output
    error = result.output[result.output.index("Error:") :].splitlines()
    assert error[0] == "Error: 2 problems in the settings: one a line", result.output
    assert error[1].startswith(f"  {path}:2: apiary.kafka.topic.nmae: unknown setting; did you mean"), error
    assert error[2].startswith(f"  {path}:5: hivewire.retry.max.attemps: unknown setting; did you mean"), error


def test_one_problem_keeps_its_one_line_and_names_the_place(tmp_path: Path) -> None:
    path = tmp_path / "hive-site.xml"
    path.write_text(
        "<configuration>\n  <property>\n    <name>endpoint.prot</name>\n    <value>1</value>\n  </property>\n"
        "</configuration>\n"
    )
    result = CliRunner().invoke(main, ["check-config", "--config", str(path)], env={})
    assert result.exit_code == 2
    assert f"Error: endpoint.prot: unknown setting; did you mean endpoint.port? ({path}:3)" in result.output


def test_the_lines_of_keys_follow_each_format(tmp_path: Path) -> None:
    properties = tmp_path / "a.properties"
    properties.write_text(PROPERTIES)
    assert key_lines(properties) == {
        "apiary.bootstrap.servers": 2,
        "apiary.kafka.topic.nmae": 3,
        "instance.name": 4,  # its value continues on line 5, which sets nothing
        "hivewire.retry.max.attemps": 6,
        "endpoint.port": 7,
    }
    toml = tmp_path / "a.toml"
    toml.write_text('x = 1\n[apiary.kafka]\n# topic = "no"\ntopic.name = "t"\n["hivewire"]\n"endpoint".port = 3\n')
    assert key_lines(toml) == {"x": 1, "apiary.kafka.topic.name": 4, "hivewire.endpoint.port": 6}
    assert key_lines(tmp_path / "missing.properties") == {}
    config = Config.load(file=properties, env={})
    assert config.provenance("instance.name").place == f"{properties}:4"
    assert config.read("instance.name") == "orders -sync"


def test_static_membership_names_one_member_so_workers_refuse_it(tmp_path: Path) -> None:
    (tmp_path / "staticapp.py").write_text("import hivewire as hw\napp = hw.App('static')\n")
    args = ["run", "staticapp:app", "--bootstrap-servers", "127.0.0.1:1", "--topic", "t", "--workers", "2"]
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        result = CliRunner().invoke(main, [*args, "--group-instance-id", "pod-0"], env={})
    assert result.exit_code == 2, result.output
    assert (
        "Error: --group-instance-id (apiary.messaging.consumer.group.instance.id): names one member: it cannot "
        "be given with --workers above 1" in " ".join(result.output.split())
    ), result.output
