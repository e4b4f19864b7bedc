"""Drone Fly's keys: the Kafka brokers and topic, the listeners, the instance and its endpoint."""

from __future__ import annotations

from hivewire.config._keys._registry import key as _key
from hivewire.config._keys._registry import prefix as _prefix
from hivewire.config._keys._registry import section as _section
from hivewire.config._kinds import HostPorts, Integer, Names, Text

KAFKA = _section(
    "Kafka and listeners",
    "Drone Fly's keys, read the same way: a Drone Fly deployment's file and environment work unchanged. "
    "`run`, `archive` and the shim share the Kafka ones.",
)
BOOTSTRAP_SERVERS = _key(KAFKA, "apiary.bootstrap.servers", HostPorts(), "Kafka brokers.")
TOPIC = _key(KAFKA, "apiary.kafka.topic.name", Text("topic name"), "The Apiary topic.")
LISTENER_LIST = _key(
    KAFKA,
    "apiary.listener.list",
    Names("import paths"),
    "Listeners by import path (`pkg.module:Name` or `pkg.module.Name`).",
)
INSTANCE_NAME = _key(
    KAFKA,
    "instance.name",
    Text("name"),
    "Names the consumer group, `apiary-kafka-metastore-receiver-<instance.name>` as Drone Fly's, so hivewire "
    "can take over its offsets.",
    default="drone-fly",
    default_doc="the app's name (`drone-fly` without an app)",
)
ENDPOINT_PORT = _key(
    KAFKA,
    "endpoint.port",
    Integer(0, 65535),
    "Port of `/metrics` and `/health`; 0 turns the endpoint off.",
    default="8008",
)
ENDPOINT_ADDRESS = _key(
    KAFKA,
    "endpoint.address",
    Text("address"),
    "Address `/metrics` and `/health` listen on. All interfaces by default, as Drone Fly's: Kubernetes probes "
    "and Prometheus reach the pod's own address; use `127.0.0.1` where only a local agent scrapes. Neither "
    "endpoint shows a secret or changes anything.",
    default="0.0.0.0",
)
CONSUMER_PREFIX = _prefix(
    KAFKA,
    "apiary.messaging.consumer.",
    "Kafka consumer properties (`security.protocol`, `sasl.*`, `auto.offset.reset`, default `latest` as Drone "
    "Fly's). Java client properties are translated for librdkafka (see below); security settings also apply "
    "to the dead-letter producer.",
)
