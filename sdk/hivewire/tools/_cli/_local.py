"""``hivewire local``: a metastore, ZooKeeper, a Kafka broker and the shim, up until Ctrl-C."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hivewire.errors import HivewireError
from hivewire.tools._cli._options import stop_on_signals

if TYPE_CHECKING:
    from hivewire.tools._stack import LocalStack


@click.command()
@click.option("--topic", default="apiary", show_default=True, help="The Apiary topic to create.")
@click.option("--no-shim", is_flag=True, help="No shim: changes to the metastore then make no events.")
@click.option(
    "--env-file",
    type=click.Path(dir_okay=False, writable=True),
    help="Also write the environment as shell exports to this file (for `source FILE`), removed on exit.",
)
@click.option(
    "--kafka",
    "kafka_kind",
    type=click.Choice(["auto", "broker", "mock"]),
    default="auto",
    show_default=True,
    help="broker: Apache Kafka from Maven Central (fetched once with Maven, then cached); mock: librdkafka's "
    "mock cluster inside this process; auto: the broker when Maven or the cache can give it, else the mock.",
)
def local(topic: str, no_shim: bool, env_file: str | None, kafka_kind: str) -> None:
    """Keep local services up until SIGINT/SIGTERM, and print how to point the other commands at them.

    A Hive Metastore and ZooKeeper (pyspark's jars; Java 17+), an Apache Kafka broker in KRaft mode (its jars
    from Maven Central, fetched once with Maven and cached; without Maven, librdkafka's mock cluster, alive as
    long as this command runs) with the topic, and the hivewire shim in front of the metastore, publishing each
    change to the topic and registered in ZooKeeper. State lives in a temporary directory, removed on exit.
    """
    from hivewire.tools._stack import NAMESPACE, LocalStack

    stop = stop_on_signals("hivewire.local", "stopping the local services")
    click.echo("starting a metastore, ZooKeeper, Kafka and the shim (Java 17+; about a minute) ...", err=True)
    try:
        stack = LocalStack(topic=topic, shim=not no_shim, kafka=kafka_kind).start()
    except HivewireError as e:
        raise click.ClickException(str(e)) from e
    try:
        env = stack.environment()
        exports = "export " + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        if env_file:
            Path(env_file).write_text(exports + "\n")
        shim = ""
        if stack.shim is not None:
            shim = f"  shim       {stack.shim.uri}  (publishes every change to {topic}; registered in ZooKeeper)\n"
        click.echo(
            "hivewire local: up; Ctrl-C stops everything and removes its state\n"
            f"  metastore  {stack.metastore.uri}  (Derby in {stack.metastore.workdir})\n"
            + shim
            + f"  zookeeper  {stack.zookeeper.quorum}  (namespace {NAMESPACE})\n"
            f"  kafka      {stack.bootstrap_servers}  (topic {topic}, {stack.partitions} partitions)\n"
            f"             {stack.kafka_description}\n"
            "\n"
            "In another shell:\n"
            f"  {exports}\n"
            "  hivewire tail --from-beginning          # print the events as they arrive\n"
            "  hivewire run listeners:app --from-beginning   # your listeners; " + _restarts(stack) + "\n"
            f"  hivewire discover --zookeeper {stack.zookeeper.quorum}\n"
            "  hivewire check-config run listeners:app   # what run will use (check-config: every command's)\n"
            f"Changes made through {stack.metastore_uri} (Spark, beeline, hw.MetastoreClient) become events."
        )
        while not stop.wait(0.5):
            pass
    finally:
        if env_file:
            Path(env_file).unlink(missing_ok=True)
        stack.stop()


def _restarts(stack: LocalStack) -> str:
    """What a restart of ``hivewire run`` waits for on this stack's Kafka (issue 33)."""
    from hivewire.tools._stack import MockKafka

    if isinstance(stack.kafka, MockKafka):  # it ignores a member leaving its group
        return "a restart waits ~45 s for the group here"
    return "Ctrl-C and run again: resumes in seconds"
