"""Issue 33, item 9: creating a table in a database that does not exist says so, not only Hive's terse name."""

from __future__ import annotations

import pytest

import hivewire as hw
from hivewire.tools import _testing as testing
from hivewire.tools._local import LocalMetastore


def test_create_table_in_a_missing_database_says_to_create_it_first(metastore: LocalMetastore, unique: str) -> None:
    with hw.MetastoreClient(metastore.uri) as client, pytest.raises(hw.MetastoreError) as caught:
        client.create_table(testing.make_table(f"{unique}_db", "customers"))
    assert str(caught.value) == (
        f"{metastore.uri} create_table({unique}_db.customers): {unique}_db: the database {unique}_db does not exist; "
        f"create it first (client.create_database(Database(name='{unique}_db', ...)))"
    )
    assert isinstance(caught.value, hw.InvalidObjectError)
