"""The message of a notification-log entry: Hive's ``json-0.2`` JSON and Hive 4's ``gzip(json-2.0)``.

Hive 2.3 and 3.1 (``JSONMessageFactory``) store the message as JSON text; Hive 4's default
``GzipJSONMessageEncoder`` stores the same JSON gzipped and Base64-encoded. Thrift objects inside the message
(``tableObjJson``, ``partitionListJson``, ...) are strings of Thrift's TJSONProtocol (field ids and type
tags), read with :func:`thrift_object`.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import zlib
from typing import TypeVar

from thrift.protocol.TJSONProtocol import TJSONProtocolFactory
from thrift.TSerialization import deserialize

from hivewire.errors import DecodeError

#: Hive 2.3/3.1's ``JSONMessageFactory`` and Hive 4's ``JSONMessageEncoder``.
PLAIN = "json-0.2"
#: Hive 4's default ``GzipJSONMessageEncoder`` (``gzip`` is the registry's alias of it).
GZIP = "gzip(json-2.0)"
_GZIP_FORMATS = frozenset({GZIP, "gzip"})
_T = TypeVar("_T")
_TJSON = TJSONProtocolFactory()


def message_text(message: str, message_format: str | None) -> str:
    """The JSON text of a stored message, gunzipped when its format (or, without one, its content) says so."""
    fmt = (message_format or "").lower()
    if fmt in _GZIP_FORMATS or (fmt != PLAIN and not message.lstrip().startswith("{")):
        try:
            return gzip.decompress(base64.b64decode(message, validate=True)).decode("utf-8")
        except (binascii.Error, OSError, EOFError, zlib.error, UnicodeDecodeError) as e:
            raise DecodeError(
                f"notification message in format {message_format!r} is not Base64 of gzipped UTF-8 JSON ({e}); "
                "check the metastore's hive.metastore.event.message.factory"
            ) from None
    return message


def parse_message(message: str, message_format: str | None) -> dict[str, object]:
    """The decoded JSON object of a stored message."""
    text = message_text(message, message_format)
    try:
        # strict=False: Hive 4's mapper allows unescaped control characters (HIVE-25857).
        value = json.loads(text, strict=False)
    except ValueError as e:
        raise DecodeError(f"notification message is not JSON ({e}): {text[:80]!r}") from None
    if not isinstance(value, dict):
        raise DecodeError(f"notification message is not a JSON object: {text[:80]!r}")
    return value


def thrift_object(cls: type[_T], text: object, where: str) -> _T:
    """The Thrift object of class ``cls`` that ``text`` (TJSONProtocol) holds; ``where`` names it in errors."""
    if not isinstance(text, str):
        raise DecodeError(f"{where}: expected a TJSONProtocol string, got {type(text).__name__}")
    try:
        obj: _T = deserialize(cls(), text.encode("utf-8"), _TJSON)
    except Exception as e:  # thrift raises TProtocolException, ValueError, KeyError, ... on bad input
        raise DecodeError(f"{where}: not a TJSONProtocol {cls.__name__} ({e})") from None
    return obj
