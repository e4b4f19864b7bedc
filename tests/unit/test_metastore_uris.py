"""URI parsing and argument rendering of MetastoreClient (no server needed)."""

from __future__ import annotations

import pytest

import hivewire as hw
from hivewire.metastore import _describe, parse_uri, parse_uris
from hivewire.testing import make_table


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("thrift://h1:9083", ("h1", 9083)),
        ("thrift://h1", ("h1", 9083)),
        ("h1:1234", ("h1", 1234)),
        ("  metastore.example.com:9084 ", ("metastore.example.com", 9084)),
        ("thrift://[::1]:9083", ("::1", 9083)),
    ],
)
def test_parse_uri(text: str, expected: tuple[str, int]) -> None:
    assert parse_uri(text) == expected


@pytest.mark.parametrize("bad", ["", "http://h1:9083", "thrift://h1:notaport", "thrift://:9083"])
def test_parse_uri_rejects_with_config_error(bad: str) -> None:
    with pytest.raises(hw.ConfigError) as exc:
        parse_uri(bad)
    assert "metastore uri" in str(exc.value)


def test_parse_uris_normalises_and_rejects_empty() -> None:
    assert parse_uris("thrift://a:1, b:2 ,,c") == ["thrift://a:1", "thrift://b:2", "thrift://c:9083"]
    assert parse_uris(["a:1"]) == ["thrift://a:1"]
    with pytest.raises(hw.ConfigError):
        parse_uris(" , ")


def test_client_validates_options_before_connecting() -> None:
    with pytest.raises(hw.ConfigError, match="transport"):
        hw.MetastoreClient("h:1", transport="http")  # type: ignore[arg-type]
    with pytest.raises(hw.ConfigError, match="protocol"):
        hw.MetastoreClient("h:1", protocol="json")  # type: ignore[arg-type]
    with pytest.raises(hw.ConfigError, match="ugi"):
        hw.MetastoreClient("h:1", ugi=":staff")
    client = hw.MetastoreClient("h:1")
    assert not client.is_open and client.uri is None


def test_describe_names_objects_briefly() -> None:
    table = make_table("sales", "orders")
    assert _describe(("sales", "orders", True)) == "sales, orders"
    assert _describe((table,)) == "sales.orders"
    assert _describe((["a", "b", "c", "d"],)) == "[4 items]"
    assert _describe(("x" * 200,)).endswith("...")


def test_generated_client_names_are_exposed_and_private_ones_are_not() -> None:
    client = hw.MetastoreClient("h:1")
    assert callable(client.get_all_databases)
    with pytest.raises(AttributeError):
        client.no_such_method  # noqa: B018
    with pytest.raises(AttributeError):
        client._oprot  # noqa: B018
