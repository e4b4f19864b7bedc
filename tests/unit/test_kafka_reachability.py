"""When ``KafkaSource`` says Kafka is unreachable (readiness reads it): only when no broker of the cluster
answers the consumer. librdkafka's error and statistics callbacks are called here as librdkafka calls them;
the three-broker kill test is tests/integration/test_kafka_readiness.py."""

from __future__ import annotations

import json
import logging

import pytest
from confluent_kafka import KafkaError

from hivewire.runtime._kafka import KafkaSource
from hivewire.runtime._kafka_log import broker_states


def statistics(**states: str) -> str:
    """librdkafka's statistics JSON with its brokers in ``states``."""
    return json.dumps({"brokers": {name: {"state": state} for name, state in states.items()}})


@pytest.fixture
def source() -> KafkaSource:
    return KafkaSource("b1:9092,b2:9092,b3:9092", "apiary")


def unreachable_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_one_broker_down_at_start_says_nothing_and_all_down_says_it_once(
    source: KafkaSource, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="hivewire.kafka")
    source._client_error(KafkaError(KafkaError._TRANSPORT, "b1:9092/bootstrap: Connect failed: Connection refused"))
    assert unreachable_lines(caplog) == []
    source._statistics(statistics(b1="DOWN", b2="UP", b3="CONNECT"))
    assert source.reachability.reachable and unreachable_lines(caplog) == []
    source._client_error(KafkaError(KafkaError._ALL_BROKERS_DOWN, "3/3 brokers are down"))
    assert not source.reachability.reachable
    (line,) = unreachable_lines(caplog)
    assert "3/3 brokers are down; last: b1:9092/bootstrap: Connect failed" in line and "--bootstrap-servers" in line


def test_the_dead_letter_producer_never_makes_kafka_unreachable(source: KafkaSource) -> None:
    source._statistics(statistics(b1="UP", b2="UP", b3="UP"))
    source._producer_error(KafkaError(KafkaError._TRANSPORT, "b2:9092/2: Connect failed: Connection refused"))
    source._producer_error(KafkaError(KafkaError._ALL_BROKERS_DOWN, "1/1 brokers are down"))
    assert source.reachability.reachable
    callbacks = source.client_callbacks("producer")
    assert "stats_cb" not in callbacks and "statistics.interval.ms" not in callbacks
    assert "stats_cb" in source.client_callbacks("consumer")


def test_no_broker_up_is_an_outage_at_the_second_report_in_a_row(source: KafkaSource) -> None:
    source._statistics(statistics(b1="UP", b2="UP", b3="UP"))
    source._statistics(statistics(b1="DOWN", b2="INIT", b3="INIT"))  # its broker died; it connects elsewhere
    assert source.reachability.reachable
    source._statistics(statistics(b1="DOWN", b2="UP", b3="INIT"))
    source._statistics(statistics(b1="DOWN", b2="INIT", b3="INIT"))
    assert source.reachability.reachable
    source._statistics(statistics(b1="DOWN", b2="DOWN", b3="CONNECT"))
    assert not source.reachability.reachable
    source._statistics(statistics(b1="UP", b2="DOWN", b3="DOWN"))
    assert source.reachability.reachable


@pytest.mark.parametrize(
    ("report", "states"),
    [
        (statistics(b1="DOWN", b2="UP"), ["DOWN", "UP"]),
        (json.dumps({"brokers": {}}), []),
        ("{not json", []),
        ("[1, 2]", []),
        (json.dumps({"brokers": ["UP"]}), []),
        (json.dumps({"brokers": {"b1": "UP", "b2": {"state": "INIT"}}}), ["INIT"]),
    ],
)
def test_a_statistics_report_gives_the_brokers_states_and_nothing_for_what_is_not_one(
    report: str, states: list[str]
) -> None:
    assert broker_states(report) == states


def test_a_malformed_statistics_report_changes_nothing(source: KafkaSource) -> None:
    source._statistics(statistics(b1="UP"))
    source._statistics("{not json")
    source._statistics("[]")
    assert source.reachability.reachable
