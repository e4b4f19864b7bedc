"""The Apiary Kafka metastore listener's JSON message format (the public face of ``hivewire.events._apiary``)."""

from hivewire.events._apiary import MAX_MESSAGE_BYTES, Decoded, decode, encode, partition_for, read, to_json_dict

__all__ = ["MAX_MESSAGE_BYTES", "Decoded", "decode", "encode", "partition_for", "read", "to_json_dict"]
