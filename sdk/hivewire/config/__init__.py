"""Configuration: every key declared once (``docs/configuration.md``), one typed reader, and the sources
(defaults, the app's settings, a file, the environment, flags) with where each value came from."""

from hivewire.config._config import Config, Provenance
from hivewire.config._files import SettingMap, SettingValue
from hivewire.config._kafka import KafkaValue
from hivewire.config._key import Key

__all__ = ["Config", "KafkaValue", "Key", "Provenance", "SettingMap", "SettingValue"]
