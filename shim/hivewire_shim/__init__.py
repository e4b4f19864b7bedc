"""hivewire_shim: a Hive Metastore Thrift front that forwards every call and publishes change events.

Clients connect to the shim instead of the metastore; it relays every call byte for byte and, for each
change that succeeded, publishes the event a listener inside the metastore would have seen (Apiary JSON
to Kafka through a durable spool, or straight to an in-process ``hivewire.App``). See docs/shim.md.
"""

from hivewire_shim.capture import EventOptions
from hivewire_shim.kafka_sink import KafkaSink, replay_rejected
from hivewire_shim.methods import MODELED_METHODS
from hivewire_shim.server import Shim
from hivewire_shim.settings import DEFAULT_HIVE_VERSION, ShimOptions, ShimSettings
from hivewire_shim.sinks import AppSink, Sink
from hivewire_shim.spool import Spool
from hivewire_shim.upstream import Upstream

__all__ = [
    "DEFAULT_HIVE_VERSION",
    "MODELED_METHODS",
    "AppSink",
    "EventOptions",
    "KafkaSink",
    "Shim",
    "ShimOptions",
    "ShimSettings",
    "Sink",
    "Spool",
    "Upstream",
    "replay_rejected",
]
