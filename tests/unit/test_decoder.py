"""The columnar decoder's two implementations: the native one and the Python fallback give the same batches,
columns can be left out, and without the native module hivewire still works and says so."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql.types import StringType, StructField, StructType, TimestampType

from hivewire.data import _decoder
from hivewire.data._arrow import ACCELERATED, SCHEMA, to_arrow
from hivewire.data._decoder import decode_messages
from hivewire.data._spark_source import requested_columns
from hivewire.errors import ConfigError, DecodeError

sys.path.insert(0, str(Path(__file__).parent))
from test_columnar import messages_with_origins

ROOT = Path(__file__).resolve().parents[2]
THREE = ["event_type", "qualified_name", "event_time"]


def test_native_and_python_give_the_same_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ACCELERATED, "the native decoder is not built (test_columnar.py::test_the_native_decoder_is_built)"
    messages = messages_with_origins(20_000, bad_share=0.05, seed=40)
    native = decode_messages(messages, "record")
    monkeypatch.setattr(_decoder, "_NATIVE", None)
    python = decode_messages(messages, "record")
    assert native.num_rows == python.num_rows == 20_000
    assert native.schema == python.schema == SCHEMA
    assert native.equals(python)


def test_only_the_columns_asked_for() -> None:
    messages = messages_with_origins(5_000, bad_share=0.05, seed=41)
    full = decode_messages(messages, "record")
    three = decode_messages(messages, "record", list(reversed(THREE)))
    assert three.schema.names == THREE  # in the schema's order, whatever the order asked
    assert three.equals(full.select(THREE))
    with pytest.raises(ValueError, match="no such columns"):
        decode_messages(messages, "record", ["event_type", "nope"])


def test_on_error_raise_raises_at_the_first_bad_message() -> None:
    messages = messages_with_origins(2_000, bad_share=0.05, seed=42)
    errors = decode_messages(messages, "record").column("decode_error").to_pylist()
    first_bad = next(i for i, e in enumerate(errors) if e is not None)
    assert first_bad > 0
    with pytest.raises(DecodeError) as caught:
        decode_messages(messages, "raise")
    assert f"apiary/{first_bad % 4}@{first_bad // 4}" in str(caught.value)
    assert decode_messages(messages[:first_bad], "raise").num_rows == first_bad


_FALLBACK = """
import sys
{block}
import hivewire.arrow as a
from hivewire.data import _decoder
assert not a.ACCELERATED, "the native decoder is in use"
sys.path.insert(0, {tests!r})
from test_columnar import messages_with_origins
messages = messages_with_origins(3000, bad_share=0.05, seed=43)
table = a.to_arrow(messages, on_error="record")
assert table.num_rows == 3000
import pyarrow.ipc as ipc
with ipc.new_file({out!r}, table.schema) as w:
    w.write_table(table)
print("fallback ACCELERATED", a.ACCELERATED)
"""

_BLOCK = """
import importlib.abc
class _Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "hivewire.data._native":
            raise ImportError("blocked by the test: as if it were not built")
        return None
sys.meta_path.insert(0, _Block())
"""


@pytest.mark.parametrize("how", ["import blocked", "HIVEWIRE_NATIVE=0"])
def test_without_the_native_module_the_python_decoder_makes_the_same_table(how: str, tmp_path: Path) -> None:
    import os

    out = tmp_path / "table.arrow"
    env = dict(os.environ)
    if how == "HIVEWIRE_NATIVE=0":
        env["HIVEWIRE_NATIVE"] = "0"
    script = _FALLBACK.format(
        block=_BLOCK if how == "import blocked" else "", tests=str(ROOT / "tests/unit"), out=str(out)
    )
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "fallback ACCELERATED False" in done.stdout
    python = pa.ipc.open_file(out).read_all()
    native = to_arrow(messages_with_origins(3000, bad_share=0.05, seed=43), on_error="record")
    assert python.num_rows == native.num_rows == 3000
    assert python.equals(native)


def test_the_spark_source_decodes_the_columns_of_the_schema_it_is_given() -> None:
    from hivewire.data._spark_schema import _events_schema

    assert requested_columns(_events_schema()) is None
    three = StructType(
        [
            StructField("event_type", StringType()),
            StructField("qualified_name", StringType()),
            StructField("event_time", TimestampType()),
        ]
    )
    assert requested_columns(three) == THREE
    with pytest.raises(ConfigError, match="with their types"):
        requested_columns(StructType([StructField("event_type", TimestampType())]))
    with pytest.raises(ConfigError, match="schema's order"):
        requested_columns(StructType(list(reversed(three.fields))))
