"""Metastore events as a ``pyarrow.Table`` with one stable schema (needs ``pip install 'hivewire[arrow]'``)."""

from hivewire.data._arrow import ACCELERATED, COLUMNS, SCHEMA, Message, Undecodable, schema_markdown, to_arrow

__all__ = ["ACCELERATED", "COLUMNS", "SCHEMA", "Message", "Undecodable", "schema_markdown", "to_arrow"]
