"""One set of CLI conventions across subcommands: logging options anywhere, the Kafka flags, unknown keys."""

from __future__ import annotations

import json
import logging

import click
import pytest
from click.testing import CliRunner

from hivewire.tools._cli import main
from hivewire.tools._cli._options import Group, _give_logging_params


def _invoke(*args: str) -> click.testing.Result:
    return CliRunner().invoke(main, list(args), env={})


@pytest.mark.parametrize("name", sorted(main.commands))
def test_every_command_takes_the_logging_options_after_its_name(name: str) -> None:
    help_text = _invoke(name, "--help", "--log-level", "debug").output
    assert "--log-level" in help_text and "--log-format [text|json]" in help_text


def _commands(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in sorted(group.commands.items()):
        found.append((*path, name))
        if isinstance(command, click.Group):
            found += _commands(command, (*path, name))
    return found


@pytest.mark.parametrize("path", _commands(main), ids=" ".join)
def test_no_command_declares_an_option_twice(path: tuple[str, ...]) -> None:
    # Commands assemble their flags from shared pieces (kafka_flags, the logging options): a duplicate makes
    # click warn on every invocation and one of the two silently wins.
    command: click.Command = main
    for name in path:
        assert isinstance(command, click.Group)
        command = command.commands[name]
    spellings = [opt for param in command.params for opt in (*param.opts, *param.secondary_opts)]
    assert len(spellings) == len(set(spellings)), sorted(s for s in spellings if spellings.count(s) > 1)


def test_logging_options_before_or_after_the_command_name() -> None:
    for args in (
        ["--log-level", "DEBUG", "check-config"],
        ["check-config", "--log-level", "debug"],
        ["--log-level", "ERROR", "check-config", "--log-level", "DEBUG"],  # the later one wins
    ):
        assert _invoke(*args).exit_code == 0
        assert logging.getLogger().level == logging.DEBUG
    _invoke("check-config", "--log-level", "warning")
    assert logging.getLogger().level == logging.WARNING


def test_json_logs_are_one_object_per_line_with_structured_fields() -> None:
    @click.command("speak")
    def speak() -> None:
        logging.getLogger("hivewire.test").warning("lag is %d", 3, extra={"partition": 2})

    group = Group("g")
    group.add_command(speak)
    result = CliRunner().invoke(group, ["speak", "--log-format", "json"])
    record = json.loads(result.stderr.strip().splitlines()[-1])
    assert record["message"] == "lag is 3" and record["level"] == "WARNING" and record["partition"] == 2
    assert record["logger"] == "hivewire.test" and record["time"].endswith("+00:00")


def test_groups_of_other_modules_get_the_options_too() -> None:
    sub = click.Group("tool", commands=[click.Command("inner", callback=lambda: None)])
    _give_logging_params(sub)
    assert any(p.name == "log_format" for p in sub.commands["inner"].params)


def test_the_kafka_flags_set_the_consumer_settings() -> None:
    result = _invoke(
        "check-config",
        "--bootstrap-servers",
        "k1:9092",
        "--topic",
        "apiary",
        "-X",
        "security.protocol=SSL",
        "--kafka-property",
        "fetch.max.wait.ms=50",
        "--group",
        "analytics",
        "--from-beginning",
    )
    assert result.exit_code == 0, result.output
    lines = {line.split()[0]: line.split(maxsplit=2)[1:] for line in result.output.splitlines()}
    assert lines["apiary.bootstrap.servers"] == ["k1:9092", "flag --bootstrap-servers"]
    assert lines["apiary.messaging.consumer.security.protocol"] == ["SSL", "flag -X security.protocol"]
    assert lines["apiary.messaging.consumer.group.id"] == ["analytics", "flag --group"]
    assert lines["apiary.messaging.consumer.auto.offset.reset"] == ["earliest", "flag --from-beginning"]


@pytest.mark.parametrize("command", ["run", "archive", "shim", "register", "check-config"])
def test_unknown_keys_fail_with_did_you_mean_in_every_command(command: str) -> None:
    result = _invoke(command, "--set", "endpoint.prot=0")
    assert result.exit_code == 2
    # the usage error names the command's flag next to the key where the command has one
    assert "endpoint.prot: unknown setting; did you mean" in result.output
    assert "endpoint.port?" in result.output or "--endpoint-port (endpoint.port)?" in result.output


def test_a_misspelt_key_in_a_config_file_fails_before_anything_starts(tmp_path: object) -> None:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    path = tmp_path / "drone-fly.properties"
    path.write_text("apiary.bootstrap.server=k:9092\n")
    result = _invoke("run", "--config", str(path))
    # the key to write in the file, not a flag the user did not use (issue 40)
    assert result.exit_code == 2 and "did you mean apiary.bootstrap.servers? (" in result.output, result.output
    assert "--bootstrap-servers" not in result.output


def test_check_config_shows_origins_and_rejects_bad_values(tmp_path: object) -> None:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    path = tmp_path / "hivewire.toml"
    path.write_text('[apiary]\nkafka.topic.name = "from-file"\n')
    result = CliRunner().invoke(
        main,
        ["check-config", "--json", "--config", str(path)],
        env={"HIVEWIRE_RETRY_MAX_ATTEMPTS": "9", "APIARY_BOOTSTRAP_SERVERS": "env:9092"},
    )
    rows = {row["key"]: row for row in json.loads(result.output)}
    assert rows["apiary.kafka.topic.name"]["source"] == f"file {path}"
    assert rows["hivewire.retry.max.attempts"] == {
        "key": "hivewire.retry.max.attempts",
        "value": "9",
        "source": "environment variable HIVEWIRE_RETRY_MAX_ATTEMPTS",
    }
    assert rows["endpoint.port"]["source"] == "default"
    bad = _invoke("check-config", "--set", "endpoint.port=http")
    assert bad.exit_code == 2 and "endpoint.port" in bad.output and "whole number" in bad.output


def test_old_spellings_still_work() -> None:
    for command, args in (
        ("shim", ["--kafka-bootstrap-servers", "k:1", "--producer-property", "x=1"]),
        ("archive", ["--group-id", "g", "--consumer-config", "x=1"]),
    ):
        help_text = _invoke(command, "--help").output
        assert all(a in help_text for a in args if a.startswith("--")), command


def test_shell_completion_as_documented() -> None:
    script = CliRunner().invoke(main, [], env={"_HIVEWIRE_COMPLETE": "bash_source"}, prog_name="hivewire")
    assert "_hivewire_completion" in script.output and "complete " in script.output
    words = {"_HIVEWIRE_COMPLETE": "bash_complete", "COMP_WORDS": "hivewire ta", "COMP_CWORD": "1"}
    assert "plain,tail" in CliRunner().invoke(main, [], env=words, prog_name="hivewire").output
    words = {"_HIVEWIRE_COMPLETE": "bash_complete", "COMP_WORDS": "hivewire tail --log-format ", "COMP_CWORD": "3"}
    assert CliRunner().invoke(main, [], env=words, prog_name="hivewire").output.split() == ["plain,text", "plain,json"]
