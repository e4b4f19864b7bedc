"""The Kafka topic's partition count, kept current for the Kafka sink: read first, then every
``refresh`` seconds, so a topic that grew gets Apiary's partitioning over all its partitions.

Invariants: no event is partitioned before the count was read once; a new count is applied only once
nothing is in flight (a table's earlier events are in the log before its later ones go to another
partition), or after a few seconds regardless, with a WARNING.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from hivewire._ratelimit import RateLimit

__all__ = ["TopicPartitions"]

# The Kafka sink's logger, one name as before this module was split from it.
log = logging.getLogger("hivewire_shim.kafka_sink")


class TopicPartitions:
    """The partition :attr:`count` of ``topic`` at ``bootstrap_servers``, read with a producer's metadata
    (each read bounded by ``timeout`` seconds). ``on_refusal`` hears a topic error (a missing ACL);
    ``said()`` tells whether a refusal was logged already (then failures to read are not); ``pending()``
    how many events wait, for the warning."""

    def __init__(
        self,
        topic: str,
        bootstrap_servers: str,
        *,
        timeout: float,
        refresh: float,
        on_refusal: Callable[[Any], None],
        said: Callable[[], bool],
        pending: Callable[[], int],
    ) -> None:
        self.topic = topic
        self.bootstrap_servers = bootstrap_servers
        self.timeout = timeout
        #: Seconds between reads of the count.
        self.refresh = refresh
        self._on_refusal = on_refusal
        self._said = said
        self._pending = pending
        #: The count events are partitioned by (None: never read).
        self.count: int | None = None
        self._new: int | None = None  # a count learnt, applied once what is in flight is delivered
        self._switch_by = 0.0
        self._next_read = 0.0
        self._warnings = RateLimit(60.0)

    def _read(self, producer: Any, *, warn: bool) -> int | None:
        """The topic's partition count from the cluster's metadata, or None (logged when ``warn``)."""
        missing = False
        try:
            metadata = producer.list_topics(self.topic, timeout=self.timeout)
            topic = metadata.topics.get(self.topic)
            if topic is not None and topic.error is None and topic.partitions:
                return len(topic.partitions)
            reason = str(topic.error) if topic is not None and topic.error is not None else "not in the metadata"
            missing = True
            if topic is not None and topic.error is not None:
                self._on_refusal(topic.error)  # no ACL for the topic: it is there, the principal may not see it
        except Exception as e:  # KafkaException while the cluster is unreachable
            reason = str(e)
            with contextlib.suppress(Exception):
                producer.poll(0)  # serves the error callback: a refusal (credentials, certificate) is said once
        if not warn or self._said():  # a refusal was said: the reason is known
            log.debug(
                "could not read the partitions of Kafka topic %s (%s); keeping %s", self.topic, reason, self.count
            )
        elif self._warnings.due():
            if missing:
                log.warning(
                    "Kafka topic %s does not exist at %s (%s); %d event(s) wait in the spool. Create the "
                    "topic (or enable auto.create.topics.enable on the brokers), or fix --topic.",
                    self.topic,
                    self.bootstrap_servers,
                    reason,
                    self._pending(),
                )
            else:
                log.warning(
                    "cannot read the metadata of Kafka topic %s from %s (%s); %d event(s) wait in the spool. "
                    "Check --bootstrap-servers, the network and the security settings "
                    "(-X/--kafka-property).",
                    self.topic,
                    self.bootstrap_servers,
                    reason,
                    self._pending(),
                )
        return None

    def learn(self, producer: Any) -> bool:
        """Know the partition count: read it first, then every :attr:`refresh` seconds (a topic
        that grew is picked up); False while it was never read."""
        now = time.monotonic()
        if self.count is not None and now < self._next_read:
            return True
        count = self._read(producer, warn=self.count is None)
        if self.count is None:
            if count is None:
                return False
            self.count = count
            log.info("Kafka topic %s has %d partition(s)", self.topic, count)
        elif count is not None and count != self.count and count != self._new:
            self._new = count
            self._switch_by = now + max(self.timeout, 5.0)
        self._next_read = now + self.refresh
        return True

    def switch(self, in_flight: int) -> bool:
        """Apply a new partition count once nothing is in flight (so every table's earlier events are in
        the log before its later ones go to another partition), or after a few seconds regardless.
        True while the switch waits (produce nothing new meanwhile)."""
        if self._new is None:
            return False
        if in_flight and time.monotonic() < self._switch_by:
            return True
        if in_flight:
            log.warning(
                "Kafka topic %s: %d event(s) still in flight while switching to %d partitions; events of a "
                "table that moves to another partition may reach consumers out of order around the switch",
                self.topic,
                in_flight,
                self._new,
            )
        log.info(
            "Kafka topic %s now has %d partition(s) (was %s); events are partitioned over all of them",
            self.topic,
            self._new,
            self.count,
        )
        self.count, self._new = self._new, None
        return False
