"""The Kafka consumers of the Spark data sources: how one is made, and Kafka refusing them for good.

Invariants: a consumer is assigned its partitions and never joins its group (:data:`GROUP`), commits nothing and
stores no offset; one whose range starts at an offset the broker deleted resumes at the first one it holds,
never at the end (the reader then reports what was deleted). A refusal for good (a missing ACL, a wrong password
or certificate, which librdkafka retries for ever) is raised as one :class:`~hivewire.errors.HivewireError` line
naming what to grant or fix; any other error is left to the caller. Consumers are made inside a call and closed
before it returns: the objects Spark pickles between processes hold none.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from hivewire.config._kafka import resolve_secrets
from hivewire.data._spark_options import SourceOptions
from hivewire.errors import HivewireError

#: The consumer group id the sources' consumers name: never joined and nothing committed, but librdkafka looks
#: the group's coordinator up, so a broker with ACLs must allow READ on it (``docs/data.md``).
GROUP = "hivewire-spark"


def make_consumer(options: SourceOptions, errors: list[Any] | None = None) -> Any:
    """A consumer with the source's settings; librdkafka's client errors (a refused password or certificate,
    which it retries for ever and never raises) are appended to ``errors`` when the caller serves them."""
    from confluent_kafka import Consumer

    from hivewire.runtime._kafka_refusal import RefusalLog

    # secrets as file:PATH / env:NAME are read where the consumer runs (the driver, each executor)
    conf: dict[str, Any] = {"group.id": GROUP, **resolve_secrets(options.consumer)}
    # librdkafka's line per retry of a refused login at DEBUG: the refusal is raised once, as one line
    conf["logger"] = RefusalLog(logging.getLogger("hivewire.kafka.librdkafka.spark"))
    if errors is not None:
        conf["error_cb"] = errors.append
    # confluent-kafka wants a group id even for assign(); these make sure it is never used: no subscribe(),
    # no commits, no stored offsets.
    conf.update({"enable.auto.commit": False, "enable.auto.offset.store": False, "enable.partition.eof": True})
    # A range whose first offsets the broker deleted after planning resumes at the first one it holds (never at
    # the end, librdkafka's default), and the executor's check reports what was deleted.
    conf["auto.offset.reset"] = "earliest"
    return Consumer(conf)


def raise_if_refused(options: SourceOptions, error: Any) -> None:
    """Raise one line naming what to grant or fix if Kafka refused the source for good (a missing ACL, ...)."""
    from hivewire.runtime._kafka_refusal import refusal

    found = refusal(
        error,
        servers=options.consumer["bootstrap.servers"],
        settings={"group.id": GROUP, **options.consumer},
        option="kafka.",
        operation="READ",
        resource=options.topic,
    )
    if found is not None:
        raise HivewireError(str(found))


def check_group(consumer: Any, options: SourceOptions, partition: int) -> None:
    """Ask the group's committed offset of one partition, to raise a refusal of the group's ACL.

    The consumers name a group (librdkafka looks its coordinator up, which the group's ACL guards), and an
    executor's read fails on a refusal only if it comes before the read ends: asked here, on the driver, a
    missing grant fails the plan in one line every time. librdkafka does not answer ``committed()`` with the
    refusal (it times out) but serves it to ``poll()``: so asked in steps of a second, polling between them.
    Only a refusal matters; any other error (the coordinator moving) is not one and is left to the reads.
    """
    from confluent_kafka import KafkaException, TopicPartition

    deadline = time.monotonic() + options.timeout
    while True:
        step = max(0.1, min(1.0, deadline - time.monotonic()))
        try:
            asked = consumer.committed([TopicPartition(options.topic, partition)], timeout=step)
        except KafkaException as e:
            raise_if_refused(options, e.args[0])
            while (served := consumer.poll(0)) is not None:  # no partition is assigned: only client errors
                if served.error() is not None:
                    raise_if_refused(options, served.error())
            if time.monotonic() >= deadline:
                return
            continue
        for tp in asked:
            if tp.error is not None:
                raise_if_refused(options, tp.error)
        return
