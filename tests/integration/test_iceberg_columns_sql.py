"""The Spark SQL of the ``iceberg_*`` columns (``hivewire.data._spark_sql.iceberg_columns``) gives what
hivewire's Python rows give, message for message (local Spark, one session for the module).

The messages: the Iceberg tables of the shared mixed-message generator (Java's parameters, pyiceberg's, bent
values) and the cases of tests/unit/test_arrow.py, each as an Apiary message; Spark parses them with the
``from_json`` schema of ``hivewire.spark.read``, as its Kafka path does.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hivewire.data._arrow import SCHEMA, to_arrow
from hivewire.data._spark_sql import iceberg_columns, message_schema
from hivewire.events import _apiary as apiary
from hivewire.events._model import AlterTableEvent, CreateTableEvent, DropTableEvent
from hivewire.tools._testing import make_table

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "unit"))
from spark_local import local_session  # noqa: E402
from test_arrow import ICEBERG_COLUMNS, mixed_messages  # noqa: E402


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    with local_session("hivewire-iceberg-columns") as session:
        yield session


def _messages() -> list[bytes]:
    iceberg = [m for m in dict.fromkeys(mixed_messages(4_000, seed=6)) if b"ICEBERG" in m.upper()]
    old = make_table("lake", "t", parameters={"table_type": "ICEBERG", "metadata_location": "s3://m/1.json"})
    new = make_table(
        "lake",
        "t",
        parameters={
            "table_type": "ICEBERG",
            "metadata_location": "s3://m/2.json",
            "current-snapshot-id": "-1",
            "current-snapshot-timestamp-ms": "5\n",
            "current-snapshot-summary": '{"operation": "append", "added-records": "007", "deleted-records": true}',
        },
    )
    hive = make_table("lake", "h", parameters={"metadata_location": "x", "current-snapshot-id": "5"})
    extra = [AlterTableEvent(old_table=old, new_table=new), CreateTableEvent(table=hive), DropTableEvent(table=new)]
    return [*iceberg, *(apiary.encode(e) for e in extra)]


def test_the_sql_gives_the_python_columns(spark: Any) -> None:
    from pyspark.sql import functions as F

    from hivewire.spark import SPARK_SCHEMA

    messages = _messages()
    assert len(messages) > 20
    expected = to_arrow(messages).select(ICEBERG_COLUMNS)
    assert all(expected.column(c).null_count < len(messages) for c in ICEBERG_COLUMNS)

    frame = spark.createDataFrame([(i, m) for i, m in enumerate(messages)], "n int, value binary")
    parsed = frame.select("n", F.from_json(F.col("value").cast("string"), message_schema()).alias("j"))
    types = {f.name: f.dataType for f in SPARK_SCHEMA.fields}
    columns = iceberg_columns()
    assert list(columns) == ICEBERG_COLUMNS
    got = parsed.orderBy("n").select(*[F.expr(sql).cast(types[name]).alias(name) for name, sql in columns.items()])
    table = got.toArrow()
    assert table.num_rows == len(messages)
    for name in ICEBERG_COLUMNS:
        column = table.column(name).cast(SCHEMA.field(name).type)
        assert column.to_pylist() == expected.column(name).to_pylist(), name
    assert expected.column("iceberg_committed_at").type == pa.timestamp("us", tz="UTC")
