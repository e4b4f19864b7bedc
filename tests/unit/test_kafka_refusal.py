"""What Kafka refusing a client means, in one line: librdkafka's errors as a real broker reports them (the texts
come from Apache Kafka 4.4 and librdkafka, as tests/integration/test_kafka_security.py meets them)."""

from __future__ import annotations

import logging

import pytest
from confluent_kafka import KafkaError

from hivewire.runtime._kafka_refusal import RefusalLog, refusal

SASL = {
    "security.protocol": "SASL_SSL",
    "sasl.mechanism": "SCRAM-SHA-512",
    "sasl.username": "etl",
    "sasl.password": "Pw-never-shown",
    "group.id": "apiary-kafka-metastore-receiver-drone-fly",
}
MTLS = {"security.protocol": "SSL", "ssl.certificate.location": "/etc/hw/client.pem", "group.id": "g"}
PREFIX = "apiary.messaging.consumer."


def error(code: int, text: str) -> KafkaError:
    return KafkaError(code, text)


def test_a_wrong_password_names_the_settings_and_the_principal_never_the_password() -> None:
    found = refusal(
        error(
            KafkaError._AUTHENTICATION,
            "sasl_ssl://b:9094/bootstrap: SASL authentication error: Authentication failed during authentication "
            "due to invalid credentials with SASL mechanism SCRAM-SHA-512 (after 375ms in state AUTH_REQ)",
        ),
        servers="b:9094",
        settings=SASL,
        option=PREFIX,
    )
    assert found is not None and found.kind == "authentication"
    assert "User:etl" in found.message and f"{PREFIX}sasl.password" in found.message
    assert "Pw-never-shown" not in found.message and "AUTH_REQ" not in found.message
    assert "\n" not in found.message


def test_certificates_either_way() -> None:
    unverified = refusal(
        error(KafkaError._SSL, "ssl://b:9093/bootstrap: SSL handshake failed: certificate verify failed: ..."),
        servers="b:9093",
        settings=MTLS,
        option=PREFIX,
    )
    assert unverified is not None and f"{PREFIX}ssl.ca.location" in unverified.message
    refused = refusal(
        error(
            KafkaError._TRANSPORT,
            "ssl://b:9093/bootstrap: Receive failed: error:0A000412:SSL routines::ssl/tls alert bad certificate: "
            "SSL alert number 42 (after 0ms in state APIVERSION_QUERY)",
        ),
        servers="b:9093",
        settings=MTLS,
        option=PREFIX,
    )
    assert refused is not None and refused.kind == "certificate"
    assert f"{PREFIX}ssl.certificate.location" in refused.message and "alert bad certificate" in refused.message


def test_a_broker_that_is_down_is_no_refusal() -> None:
    down = error(KafkaError._TRANSPORT, "b:9092/bootstrap: Connect to ipv4#127.0.0.1:9092 failed: Connection refused")
    assert refusal(down, servers="b:9092", settings={}, option=PREFIX) is None
    all_down = error(KafkaError._ALL_BROKERS_DOWN, "1/1 brokers are down")
    assert refusal(all_down, servers="b", settings={}, option="") is None


@pytest.mark.parametrize(
    ("code", "operation", "expected"),
    [
        (KafkaError.GROUP_AUTHORIZATION_FAILED, "READ", "READ on group apiary-kafka-metastore-receiver-drone-fly"),
        (KafkaError.TOPIC_AUTHORIZATION_FAILED, "READ", "READ on topic apiary"),
        (KafkaError.TOPIC_AUTHORIZATION_FAILED, "WRITE", "WRITE on topic apiary"),
        # an idempotent producer that may write nowhere is refused a producer id as "cluster authorization"
        (KafkaError.CLUSTER_AUTHORIZATION_FAILED, "WRITE", "WRITE on topic apiary to User:etl (the idempotent"),
    ],
)
def test_a_missing_acl_names_the_grant(code: int, operation: str, expected: str) -> None:
    found = refusal(
        error(code, "Broker: authorization failed"),
        servers="b:9094",
        settings=SASL,
        option=PREFIX,
        operation=operation,
        resource="apiary",
    )
    assert found is not None and found.kind == "authorization"
    assert f"denies {expected}" in found.message and "--allow-principal User:etl" in found.message


def test_librdkafka_lines_about_a_refusal_go_to_debug(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("test.refusal.log")
    log = RefusalLog(logger)
    with caplog.at_level(logging.DEBUG, logger="test.refusal.log"):
        log.log(logging.ERROR, "%s [%s] %s", "FAIL", "rdkafka#producer-1", "SASL authentication error: x")
        log.log(logging.ERROR, "%s [%s] %s", "FAIL", "rdkafka#producer-1", "Connect failed: Connection refused")
    assert [(r.levelno, r.getMessage().split()[-1]) for r in caplog.records] == [
        (logging.DEBUG, "x"),
        (logging.ERROR, "refused"),
    ]
