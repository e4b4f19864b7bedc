"""What hivewire makes of librdkafka's words: a consumer setting it refuses named as the user wrote it
(:mod:`hivewire.runtime._kafka_bad_setting`), and its log lines at the level they deserve
(:mod:`hivewire.runtime._kafka_log`). librdkafka itself judges the settings here: nothing is stubbed.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException

from hivewire.runtime._kafka_bad_setting import bad_setting
from hivewire.runtime._kafka_log import LibrdkafkaLog

BASE = {"bootstrap.servers": "localhost:1", "group.id": "g"}


def refused(settings: dict[str, Any], origins: dict[str, str]) -> str:
    conf = {**BASE, **settings}
    with pytest.raises(KafkaException) as exc:
        Consumer(conf).close()
    error = bad_setting(exc.value, conf, settings, origins)
    assert "librdkafka refuses this Kafka consumer setting" in str(error)
    return error.key


def test_the_setting_librdkafka_names_is_named_as_the_user_wrote_it() -> None:
    settings = {"session.timeout.ms": "nope", "client.id": "mine"}
    assert refused(settings, {}) == "apiary.messaging.consumer.session.timeout.ms"
    # translated from a Java property: named as given
    assert refused({"security.protocol": "bogus"}, {"security.protocol": "java.protocol"}) == (
        "apiary.messaging.consumer.java.protocol"
    )


def test_a_setting_librdkafka_does_not_name_is_found_by_leaving_each_out() -> None:
    settings = {"client.id": "mine", "security.protocol": "SSL", "ssl.ca.location": "/nonexistent/ca.pem"}
    origins = {"ssl.ca.location": "ssl.truststore.location"}
    # either is a setting without which librdkafka takes the rest; client.id is not
    assert refused(settings, origins) in {
        "apiary.messaging.consumer.ssl.truststore.location",
        "apiary.messaging.consumer.security.protocol",
    }


def test_connection_failures_and_retries_are_debug_lines(caplog: pytest.LogCaptureFixture) -> None:
    out = LibrdkafkaLog(logging.getLogger("hivewire.kafka.librdkafka.test"))
    with caplog.at_level(logging.DEBUG, logger="hivewire.kafka.librdkafka.test"):
        out.log(logging.ERROR, "%s [%s]: %s", "FAIL", "thrd:main", "Connect to ipv4#127.0.0.1:1 failed")
        out.log(logging.WARNING, "%s [%s]: %s", "GETPID", "thrd:main", "Failed to acquire idempotence PID")
        out.log(logging.WARNING, "%s [%s]: %s", "CONFWARN", "thrd:app", "Configuration property is deprecated")
    assert [(r.levelno, r.getMessage().split(" ")[0]) for r in caplog.records] == [
        (logging.DEBUG, "FAIL"),
        (logging.DEBUG, "GETPID"),
        (logging.WARNING, "CONFWARN"),
    ]
