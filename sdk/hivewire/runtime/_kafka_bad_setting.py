"""A consumer setting librdkafka refuses (:func:`bad_setting`), as a :class:`~hivewire.errors.ConfigError`
naming the user's key as they wrote it (``apiary.messaging.consumer.<key>``, the Java name when they gave one).

Invariant: the key named is one of the user's settings: the one librdkafka's message quotes, else the one
without which librdkafka stops giving the same reason; ``apiary.messaging.consumer.*`` when neither finds one.
The message is librdkafka's reason, never a setting's value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from confluent_kafka import Consumer, KafkaException

from hivewire.config._kafka import CONSUMER_PREFIX
from hivewire.errors import ConfigError
from hivewire.runtime._kafka_readers import reason


def bad_setting(
    error: KafkaException, conf: Mapping[str, Any], settings: Mapping[str, Any], origins: Mapping[str, str]
) -> ConfigError:
    """librdkafka refused ``conf``: a :class:`ConfigError` naming the user's setting at fault, as they wrote it
    (``settings`` are the user's after translation, ``origins`` the keys they were translated from)."""
    why = reason(error)
    named = [name for name in re.findall(r'["`]([A-Za-z0-9_.]+)["`]', why) if name in settings]
    if not named:  # librdkafka's message does not name it (Java JAAS lines, trust stores, ...): find the
        # setting without which librdkafka stops giving this reason.
        named = [key for key in settings if _refusal({k: v for k, v in conf.items() if k != key}) != why]
    key = f"{CONSUMER_PREFIX}{origins.get(named[0], named[0])}" if named else f"{CONSUMER_PREFIX}*"
    return ConfigError(key, f"librdkafka refuses this Kafka consumer setting: {why}")


def _refusal(conf: Mapping[str, Any]) -> str | None:
    """librdkafka's reason for refusing ``conf`` (None if it takes it)."""
    try:
        Consumer(dict(conf)).close()
        return None
    except KafkaException as e:
        return reason(e)
