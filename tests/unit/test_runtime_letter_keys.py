"""Issue 33, item 7: a dead letter's key keeps each table's letters in one partition, in order."""

from __future__ import annotations

import hivewire as hw
from hivewire.events import _apiary as apiary
from hivewire.runtime._delivery import dead_letter_headers
from hivewire.runtime._item import Item
from hivewire.runtime._kafka_letters import letter_key
from hivewire.runtime._source import MemoryRecord
from hivewire.tools import _testing as testing


def _item(value: bytes, key: bytes | None = None) -> Item:
    record = MemoryRecord(value, "apiary", 3, 17, 1_700_000_000_000, key)
    return Item.of(("apiary", 3), record, value, apiary.read(value))


def test_a_letter_is_keyed_by_its_record_else_its_table_else_its_partition() -> None:
    value = apiary.encode(testing.make_event(hw.AlterTableEvent, "sales", "orders"))
    unkeyed = _item(value)
    headers = dead_letter_headers("app", "sync", unkeyed, RuntimeError("no"), 5)
    assert headers["hivewire.source.table"] == "sales.orders"
    assert letter_key(unkeyed, headers) == b"sales.orders"
    keyed = _item(value, key=b"own-key")
    assert letter_key(keyed, dead_letter_headers("app", "sync", keyed, RuntimeError("no"), 5)) == b"own-key"
    undecodable = MemoryRecord(b"not json", "apiary", 2, 9, None, None)
    headers = dead_letter_headers("app", "hivewire.decoder", undecodable, "not JSON", 0)
    assert "hivewire.source.table" not in headers
    assert letter_key(undecodable, headers) == b"apiary/2"
