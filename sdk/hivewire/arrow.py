"""Metastore events as a ``pyarrow.Table`` with one stable schema (needs ``pip install 'hivewire[arrow]'``)."""

from hivewire.data._arrow import COLUMNS, SCHEMA, Message, Undecodable, schema_markdown, to_arrow

__all__ = ["COLUMNS", "SCHEMA", "Message", "Undecodable", "schema_markdown", "to_arrow"]
