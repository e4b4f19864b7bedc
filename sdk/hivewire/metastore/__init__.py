"""The metastore side: the Thrift client, metastore addresses, ZooKeeper discovery (HIVE-20794) and registration.

Discovery and registration need kazoo; they are imported on first use, so the client alone loads only thrift.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hivewire.metastore._addresses import DEFAULT_PORT, connect, format_address, format_uri, parse_uri, parse_uris
from hivewire.metastore._client import ACCELERATED, MetastoreClient
from hivewire.metastore._pool import MetastoreClientPool
from hivewire.metastore._resolver import FixedUris, UriResolver
from hivewire.metastore._sasl import SaslAuth

if TYPE_CHECKING:
    from hivewire.metastore._discovery import ZooKeeperResolver, discover_metastores
    from hivewire.metastore._registration import Registration, RegistrationEvent
    from hivewire.metastore._zookeeper import DEFAULT_NAMESPACE, DiscoveryConfig, discovery_config

__all__ = [
    "ACCELERATED",
    "DEFAULT_NAMESPACE",
    "DEFAULT_PORT",
    "DiscoveryConfig",
    "FixedUris",
    "MetastoreClient",
    "MetastoreClientPool",
    "Registration",
    "RegistrationEvent",
    "SaslAuth",
    "UriResolver",
    "ZooKeeperResolver",
    "connect",
    "discover_metastores",
    "discovery_config",
    "format_address",
    "format_uri",
    "parse_uri",
    "parse_uris",
]

_LAZY = {
    "DEFAULT_NAMESPACE": "_discovery",
    "DiscoveryConfig": "_discovery",
    "ZooKeeperResolver": "_discovery",
    "discover_metastores": "_discovery",
    "discovery_config": "_discovery",
    "Registration": "_registration",
    "RegistrationEvent": "_registration",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hivewire.metastore' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"hivewire.metastore.{module}"), name)
    globals()[name] = value
    return value
