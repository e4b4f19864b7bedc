"""Tools on top of the SDK: local servers from pyspark's jars, the demo, and the ``hivewire`` command line."""

from hivewire.tools._local import LocalMetastore, LocalService, LocalZooKeeper, free_port

__all__ = ["LocalMetastore", "LocalService", "LocalZooKeeper", "free_port"]
