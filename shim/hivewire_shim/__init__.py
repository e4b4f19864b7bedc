"""hivewire_shim: a Hive Metastore Thrift front that forwards every call and publishes change events."""
